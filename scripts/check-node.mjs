// Plain JavaScript on purpose: it must run (and fail loudly) on any Node, even one too old to strip types.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 17)) {
  console.error(
    `This project needs Node.js >= 22.17 (it runs TypeScript through type stripping); found ${process.versions.node}.\n` +
      'Run `npm install` so the pinned Node from devDependencies is used, or install a newer Node.',
  );
  process.exit(1);
}
