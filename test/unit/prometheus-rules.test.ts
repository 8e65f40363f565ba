import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SyncMetrics } from '../../src/metrics/sync-metrics.js';

/** The sample alert rules users load into Prometheus name only metrics and labels /metrics has. */
describe('config/prometheus/alerts.yml', () => {
  const file = join(import.meta.dirname, '../../config/prometheus/alerts.yml');
  const rules = (
    parse(readFileSync(file, 'utf8')) as {
      groups: Array<{ rules: Array<{ alert: string; expr: string; annotations: object }> }>;
    }
  ).groups.flatMap((g) => g.rules);

  it('when the rules are read, then each alert has an expression, a summary and a description', () => {
    expect(rules.length).toBeGreaterThanOrEqual(5);
    for (const rule of rules) {
      expect(rule.alert).toMatch(/^ReceivablesSync[A-Z]\w+$/);
      expect(rule.expr).toContain('receivables_sync_');
      expect(rule.annotations).toMatchObject({
        summary: expect.any(String),
        description: expect.any(String),
      });
    }
  });

  it('when a rule names a metric and its labels, then /metrics declares that metric with those labels', async () => {
    const text = (await new SyncMetrics({ sourceIds: ['s'], lastSuccess: async () => [] }).text()).body;
    const declared = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
    declared.add('receivables_sync_queue_jobs'); // declared; sampled only in a process with queues
    for (const rule of rules) {
      for (const [, name, labels] of rule.expr.matchAll(/(receivables_sync_\w+)(?:\{([^}]*)\})?/g)) {
        expect(declared, `${rule.alert}: ${name}`).toContain(name);
        for (const [, label] of (labels ?? '').matchAll(/(\w+)\s*=~?/g)) {
          if (name === 'receivables_sync_queue_jobs') expect(['queue', 'state']).toContain(label);
          else
            expect(text, `${rule.alert}: ${name}{${label}}`).toMatch(
              new RegExp(`^${name}\\{[^}]*\\b${label}="`, 'm'),
            );
        }
      }
    }
  });
});
