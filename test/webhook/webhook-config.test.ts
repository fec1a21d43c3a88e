import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../src/jobs/runner.ts';
import { webhookSettings } from '../../src/jobs/worker.ts';
import { retryDelayMs } from '../../src/modules/webhook/webhook.dispatcher.ts';

describe('webhook configuration', () => {
  it('refuses private targets unless WEBHOOK_ALLOW_PRIVATE_TARGETS is true, and validates the rest', () => {
    const defaults = loadConfig({});
    expect(defaults.WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe(false);
    expect(webhookSettings(defaults)).toEqual(DEFAULT_WEBHOOK_SETTINGS);
    const set = loadConfig({
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_TIMEOUT_MS: '2500',
      WEBHOOK_RETRY_BASE_MS: '100',
      WEBHOOK_RETRY_HOURS: '0.5',
    });
    expect(webhookSettings(set)).toEqual({
      allowPrivateTargets: true,
      timeoutMs: 2500,
      retryBaseMs: 100,
      retryPeriodMs: 1_800_000,
    });
    expect(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'yes' })).toThrow(ConfigError);
    expect(() => loadConfig({ WEBHOOK_TIMEOUT_MS: '0' })).toThrow(/WEBHOOK_TIMEOUT_MS/);
  });

  it('waits three times longer after each failure, at most 12 hours, over about 3 days by default', () => {
    const delays = Array.from({ length: 14 }, (_, n) => retryDelayMs(DEFAULT_WEBHOOK_SETTINGS, n + 1));
    expect(delays.slice(0, 4)).toEqual([10_000, 30_000, 90_000, 270_000]);
    expect(Math.max(...delays)).toBe(12 * 3600_000);
    // Attempts until the period ends: the last waits are cut to end at 72 hours.
    let elapsed = 0;
    let attempts = 1;
    while (elapsed < DEFAULT_WEBHOOK_SETTINGS.retryPeriodMs) {
      elapsed = Math.min(
        elapsed + retryDelayMs(DEFAULT_WEBHOOK_SETTINGS, attempts),
        DEFAULT_WEBHOOK_SETTINGS.retryPeriodMs,
      );
      attempts += 1;
    }
    expect(attempts).toBe(15);
  });
});
