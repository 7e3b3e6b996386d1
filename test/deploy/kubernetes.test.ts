/**
 * The kustomize base: `kubectl kustomize` renders it offline, every rendered object validates
 * against the Kubernetes and prometheus-operator schemas (kubernetes-models), the pieces refer to
 * each other correctly, and the sidecar's arguments and environment are a configuration the real
 * config loader accepts.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PodMonitor, type IPodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { Secret, type ISecret } from 'kubernetes-models/v1/Secret';
import { Service, type IService } from 'kubernetes-models/v1/Service';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { parseByteSize } from '../../src/configValues.js';
import { kubectl } from '../support/tools.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const BASE = `${REPO}deploy/kubernetes`;
const tool = kubectl();

interface Rendered {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string };
  readonly [field: string]: unknown;
}

/** The schema for each kind the base may render; anything else fails the test. */
const MODELS: Record<string, (object: Rendered) => { validate(): void }> = {
  'v1/Secret': (object) => new Secret(object),
  'v1/Service': (object) => new Service(object),
  'apps/v1/Deployment': (object) => new Deployment(object),
  'monitoring.coreos.com/v1/PodMonitor': (object) => new PodMonitor(object as unknown as IPodMonitor),
};

function render(): Rendered[] {
  const result = spawnSync(tool.path!, ['kustomize', BASE], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`kubectl kustomize failed: ${result.stderr}`);
  return parseAllDocuments(result.stdout).map((document) => unwrapSecretData(document.toJSON() as Rendered));
}

/**
 * kustomize folds a Secret's base64 at 70 columns; the API server's decoder skips those newlines,
 * the schema's "byte" format does not, so they are removed before validating.
 */
function unwrapSecretData(object: Rendered): Rendered {
  if (object.kind !== 'Secret') return object;
  const data = Object.fromEntries(Object.entries(object.data as Record<string, string>).map(([key, value]) => [key, value.replace(/\s/g, '')]));
  return { ...object, data };
}

describe.skipIf(tool.path === undefined)(`Kubernetes kustomize base (${tool.skipReason ?? 'kubectl'})`, () => {
  const objects = tool.path === undefined ? [] : render();
  const find = (kind: string): Rendered => {
    const found = objects.find((object) => object.kind === kind);
    if (found === undefined) throw new Error(`no ${kind} rendered`);
    return found;
  };
  const deployment = () => find('Deployment') as unknown as IDeployment;
  const secret = () => find('Secret') as unknown as ISecret & { metadata: { name: string }; data: Record<string, string> };
  const service = () => find('Service') as unknown as IService;
  const podMonitor = () => find('PodMonitor') as unknown as IPodMonitor;
  const pod = () => deployment().spec!.template.spec!;
  const sidecar = (): IContainer => {
    const container = pod().initContainers?.find((entry) => entry.name === 'metrics-sidecar');
    if (container === undefined) throw new Error('no metrics-sidecar init container');
    return container;
  };

  it('renders a Secret, a Service, a Deployment and a PodMonitor', () => {
    expect(objects.map((object) => `${object.apiVersion}/${object.kind}`).sort()).toEqual(Object.keys(MODELS).sort());
  });

  it('validates every rendered object against its schema', () => {
    for (const object of objects) {
      const model = MODELS[`${object.apiVersion}/${object.kind}`];
      expect(model, `${object.apiVersion}/${object.kind}`).toBeDefined();
      expect(() => model!(object).validate(), `${object.kind}/${object.metadata.name}`).not.toThrow();
    }
  });

  it('rejects a Deployment the schema forbids (the validation above can fail)', () => {
    const broken = structuredClone(deployment());
    const ports = broken.spec!.template.spec!.initContainers![1]!.ports!;
    (ports[0] as { containerPort: unknown }).containerPort = 'metrics';
    expect(() => new Deployment(broken).validate()).toThrow(/containerPort must be integer/);
  });

  it('runs the sidecar as a native sidecar with ingest on the pod loopback and probes on /-/healthy and /-/ready', () => {
    expect(pod().initContainers!.map((container) => [container.name, container.restartPolicy])).toEqual([
      ['install-plugin', undefined],
      ['metrics-sidecar', 'Always'],
    ]);
    expect(sidecar().args).toContain('--ingest.listen-address=127.0.0.1:9479');
    expect(sidecar().livenessProbe?.httpGet).toEqual({ path: '/-/healthy', port: 'metrics' });
    expect(sidecar().readinessProbe?.httpGet).toEqual({ path: '/-/ready', port: 'metrics' });
    expect(sidecar().startupProbe?.httpGet).toEqual({ path: '/-/ready', port: 'metrics' });
    expect(sidecar().securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    expect(pod().initContainers![0]!.args).toEqual(['install-plugin', '--hermes-home', '/opt/data', '--enable', '--create']);
  });

  it('sizes memory from the measured worst case (bench section worstcase): the guard above its peak, the limit above the guard by the in-flight budget', () => {
    expect(sidecar().resources?.limits?.memory).toBe('512Mi');
    expect(sidecar().resources?.requests?.memory).toBe('352Mi');
    const guard = parseByteSize(sidecar().env?.find((variable) => variable.name === 'HERMES_SIDECAR_MEMORY_RSS_LIMIT_BYTES')?.value);
    expect(guard).toBe(384 * 2 ** 20);
    const inflightBudget = loadConfig({ argv: [], env: {} }).ingest.maxInflightBytes;
    expect((guard ?? Infinity) + inflightBudget).toBeLessThanOrEqual(512 * 2 ** 20);
  });

  it('wires the web config Secret, the Service and the PodMonitor to the pod', () => {
    const volume = pod().volumes?.find((entry) => entry.name === 'web-config');
    expect(volume?.secret?.secretName).toBe(secret().metadata.name);
    expect(secret().metadata.name).toMatch(/^hermes-sidecar-web-config-[a-z0-9]{10}$/);
    const mount = sidecar().volumeMounts?.find((entry) => entry.name === 'web-config');
    expect(sidecar().args).toContain(`--web.config.file=${mount?.mountPath}/web-config.yml`);
    expect(Object.keys(secret().data)).toEqual(['web-config.yml']);

    const podLabels = deployment().spec!.template.metadata?.labels;
    expect(podLabels).toMatchObject(service().spec!.selector!);
    expect(podLabels).toMatchObject(podMonitor().spec.selector.matchLabels!);
    const portName = sidecar().ports?.[0]?.name;
    expect(service().spec!.ports![0]!.targetPort).toBe(portName);
    const endpoint = podMonitor().spec.podMetricsEndpoints[0]!;
    expect(endpoint.port).toBe(portName);
    expect(endpoint.relabelings![0]).toEqual({ targetLabel: 'job', replacement: 'hermes-sidecar' });
  });

  it('gives the sidecar arguments and environment the real config loader accepts', () => {
    const webConfig = Buffer.from(secret().data['web-config.yml']!, 'base64').toString('utf8');
    const env = Object.fromEntries((sidecar().env ?? []).map((variable) => [variable.name, variable.value]));
    const config = loadConfig({ argv: sidecar().args ?? [], env, readFile: () => webConfig });
    expect(config.ingest.listen).toEqual({ host: '127.0.0.1', port: 9479 });
    expect(config.web.listen).toEqual({ host: '0.0.0.0', port: 9478 });
    expect(config.memory.rssLimitBytes).toBe(384 * 2 ** 20);
  });

  it('ships a plain Prometheus pod-discovery job with the same job name and instance labels', () => {
    // Debian's promtool is built without Kubernetes service discovery, so it cannot check this file.
    const config = parseYaml(readFileSync(`${BASE}/prometheus-pod-discovery.yml`, 'utf8')) as {
      scrape_configs: { job_name: string; kubernetes_sd_configs: unknown; relabel_configs: Record<string, unknown>[] }[];
    };
    const job = config.scrape_configs[0]!;
    expect(job.job_name).toBe('hermes-sidecar');
    expect(job.kubernetes_sd_configs).toEqual([{ role: 'pod' }]);
    expect(job.relabel_configs[0]).toMatchObject({ action: 'keep', regex: 'hermes-agent;metrics' });
    expect(job.relabel_configs[1]).toMatchObject({ separator: '/', target_label: 'instance' });
  });
});
