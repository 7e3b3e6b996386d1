// Type-aware lint for every TypeScript tree; `npm test` runs it as its own step.
// The rule set is typescript-eslint's recommendedTypeChecked on top of ESLint's recommended.
// The rules configured below fight a deliberate style of this codebase; each says why.
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tmp/**', 'plugin/**', 'dashboards/**', 'rules/**', 'deploy/**', 'docs/**'] },
  {
    files: ['**/*.ts'],
    extends: [eslint.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A leading underscore names what a signature requires but the body does not use
      // (express recognises an error handler by its four parameters) and a field destructured
      // away so the rest can be passed on.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // `async () => value` is how this code fills a Promise-returning slot (close(), reload(),
      // cleanup lists, injected compare functions): a throw inside becomes a rejection, which
      // Promise.resolve(value) would not give.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // supertest types every response body as `any`, and vitest types its asymmetric matchers
      // (expect.any, expect.stringMatching) as `any`; each use is an assertion of an exact value,
      // which is the check these rules would otherwise ask for.
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
    },
  },
);
