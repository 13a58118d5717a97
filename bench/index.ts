/**
 * `npm run bench [name…]`: runs every benchmark (or the named ones) in turn and prints figures.
 * Each bench module exports `run()`; they start their own servers on free local ports.
 */
const benches: Record<string, () => Promise<{ run(): Promise<void> }>> = {
  api: () => import('./api.js'),
  agent: () => import('./agent.js'),
  knowledge: () => import('./knowledge.js'),
  quality: () => import('./quality.js'),
  reading: () => import('./reading.js'),
  webhooks: () => import('./webhooks.js'),
};

const wanted = process.argv.slice(2);
for (const name of wanted) {
  if (!benches[name]) {
    console.error(`Unknown benchmark "${name}". Known: ${Object.keys(benches).join(', ')}`);
    process.exit(2);
  }
}
for (const [name, load] of Object.entries(benches)) {
  if (wanted.length && !wanted.includes(name)) continue;
  console.log(`\n### ${name}`);
  await (await load()).run();
}
