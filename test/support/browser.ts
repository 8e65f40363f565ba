import { type Browser, chromium, type Page } from 'playwright-core';

/** Debian's Chromium (`apt install chromium`), or `CHROMIUM_PATH`. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** A headless Chromium for the dashboard's browser tests, quiet (no background traffic). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Signs in through the dashboard's form at `url` (its sign-in page is where `/` sends a stranger). */
export async function signIn(page: Page, url: string, user: string, password: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel('User').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}
