// refgen.mjs: the reference's macOS wrapper as a black box, for the
// differential test in this directory (refdiff_test.go).
//
//   SRT_REFERENCE_DIR=<the @anthropic-ai/sandbox-runtime package dir> \
//     node refgen.mjs < cases.json > results.jsonl
//
// cases.json is an array of {name, cwd, home, env, settings, command,
// shell, httpProxyPort, socksProxyPort}. For each case the reference's own
// SandboxManager is initialised with the settings (the proxy ports given
// as network.httpProxyPort/socksProxyPort, so it starts no proxy of its
// own), in a process whose working directory, HOME and environment are
// the case's, and wrapWithSandbox(command, shell) is called. The line
// printed is {name, version, wrapped} (the wrapped command string, as the
// reference returns it) or {name, error}. Nothing of the reference is
// copied or translated: this only calls it.
//
// The reference picks its backend by process.platform, so the platform is
// reported as darwin before the package loads; wrapWithSandbox on darwin
// is pure string building (it runs nothing), which is what is compared.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

Object.defineProperty(process, 'platform', { value: 'darwin' });

const dir = process.env.SRT_REFERENCE_DIR;
if (!dir) {
  console.error('refgen: SRT_REFERENCE_DIR is not set');
  process.exit(2);
}
const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
const { SandboxManager } = await import(join(dir, 'dist/index.js'));

const cases = JSON.parse(readFileSync(0, 'utf8'));
const path = process.env.PATH;
for (const c of cases) {
  for (const k of Object.keys(process.env)) delete process.env[k];
  process.env.PATH = path;
  process.env.HOME = c.home;
  Object.assign(process.env, c.env || {});
  let line;
  try {
    process.chdir(c.cwd);
    const settings = structuredClone(c.settings);
    settings.network ??= { allowedDomains: [], deniedDomains: [] };
    if (c.httpProxyPort) settings.network.httpProxyPort = c.httpProxyPort;
    if (c.socksProxyPort) settings.network.socksProxyPort = c.socksProxyPort;
    await SandboxManager.initialize(settings, undefined, false);
    const wrapped = await SandboxManager.wrapWithSandbox(c.command, c.shell);
    line = { name: c.name, version: pkg.version, wrapped };
  } catch (e) {
    line = { name: c.name, version: pkg.version, error: String(e && e.stack || e) };
  }
  try {
    await SandboxManager.reset();
  } catch (e) {
    line.resetError = String(e);
  }
  process.stdout.write(JSON.stringify(line) + '\n');
}
// Exit once stdout is flushed (a pipe is asynchronous on macOS): the
// reference may leave timers behind that would keep Node running.
await new Promise((resolve) => process.stdout.write('', resolve));
process.exit(0);
