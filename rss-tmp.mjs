const mods = process.argv.slice(2);
for (const m of mods) await import(m);
await new Promise(r => setTimeout(r, 1000));
const s=(await import('node:fs')).readFileSync('/proc/self/status','utf8');
const g=(k)=>(/`${k}`/, Number(new RegExp(k+':\\s+(\\d+)').exec(s)[1])/1024).toFixed(1);
const m=process.memoryUsage();
console.log((mods.join(',')||'bare').padEnd(40), 'rss',g('VmRSS'),'anon',g('RssAnon'),'file',g('RssFile'),'heapUsed',(m.heapUsed/2**20).toFixed(1),'heapTotal',(m.heapTotal/2**20).toFixed(1));
