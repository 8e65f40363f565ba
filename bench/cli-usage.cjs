// Preloaded into the CLI's processes by bench/cli-pass.ts (NODE_OPTIONS=--require): at exit, writes
// the process's peak RSS (the kernel's high-water mark, VmHWM) and CPU time to BENCH_USAGE_FILE,
// with the peaks of what makes it up as sampled each second: V8's heap (heapTotal) and the memory
// outside it (external: buffers, and the embedded state DB's WebAssembly memory).
const { readFileSync, writeFileSync } = require('node:fs');

const file = process.env.BENCH_USAGE_FILE;
if (file) {
  const peaks = { heapTotalMb: 0, externalMb: 0 };
  const sample = () => {
    const { heapTotal, external } = process.memoryUsage();
    peaks.heapTotalMb = Math.max(peaks.heapTotalMb, Math.round(heapTotal / 2 ** 20));
    peaks.externalMb = Math.max(peaks.externalMb, Math.round(external / 2 ** 20));
  };
  setInterval(sample, 1000).unref();
  process.on('exit', () => {
    sample();
    const hwm = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    const cpu = process.cpuUsage();
    const usage = {
      peakRssMb: hwm ? Math.round(Number(hwm[1]) / 1024) : null,
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      ...peaks,
    };
    writeFileSync(file, JSON.stringify(usage));
  });
}
