// Preloaded into the CLI's processes by bench/cli-pass.ts (NODE_OPTIONS=--require): at exit, writes
// the process's peak RSS (the kernel's high-water mark, VmHWM) and CPU time to BENCH_USAGE_FILE.
const { readFileSync, writeFileSync } = require('node:fs');

const file = process.env.BENCH_USAGE_FILE;
if (file) {
  process.on('exit', () => {
    const hwm = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    const cpu = process.cpuUsage();
    const usage = {
      peakRssMb: hwm ? Math.round(Number(hwm[1]) / 1024) : null,
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    };
    writeFileSync(file, JSON.stringify(usage));
  });
}
