/**
 * The alert run's own validation of a sandbox's provider settings, before anything starts: a bad
 * URL, zone, page size or response mapping is a usage error naming the variable, not a failure
 * after moto and the simulator are up. Used by `news-alerts sandbox up` and `npm start`.
 */
import { loadAlertRunConfig } from '#alert-run/config';

/**
 * Checks `environment` (the provider variables a sandbox will run with) as the alert function
 * checks its configuration; the names of tables and the secret are placeholders.
 * @throws ConfigError naming the variable at fault
 */
export function checkProviderSettings(
  environment: Readonly<Record<string, string | undefined>>,
  provider: { readonly url?: string | undefined; readonly caPem?: string | undefined },
): void {
  loadAlertRunConfig({
    ...environment,
    NEWS_API_BASE_URL: provider.url ?? 'https://127.0.0.1/',
    // A sandbox's provider may be local (the simulator on loopback) by design.
    NEWS_API_ALLOW_INTERNAL_TARGET: 'true',
    ...(provider.caPem !== undefined ? { NEWS_API_CA_PEM: provider.caPem } : {}),
    NEWS_API_KEY_SECRET_ID: 'sandbox',
    RULES_TABLE_NAME: 'rules',
    AUDIENCES_TABLE_NAME: 'audiences',
    STATE_TABLE_NAME: 'state',
  });
}
