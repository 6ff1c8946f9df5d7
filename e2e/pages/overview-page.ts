// Page object for the overview's card view ("/?view=cards"): one card per monitored target. Returns locators; specs assert.
import type { Locator, Page } from '@playwright/test';

export class TargetCard {
  constructor(readonly root: Locator) {}

  /** The card's title link to the target page. */
  get link(): Locator {
    return this.root.getByRole('link').first();
  }
  get status(): Locator {
    return this.root.getByTestId('target-status');
  }
  get version(): Locator {
    return this.root.getByTestId('target-version');
  }
  get threadHandling(): Locator {
    return this.root.getByTestId('target-thread-handling');
  }
  /** Why the target is down or degraded. */
  get reason(): Locator {
    return this.root.getByTestId('target-reason');
  }
  /** "N stalled group(s)" badge. */
  get stalledBadge(): Locator {
    return this.root.getByTestId('target-stalled');
  }
  get poolOffNotice(): Locator {
    return this.root.getByTestId('pool-off-notice');
  }
  get privilegeWarning(): Locator {
    return this.root.getByTestId('privilege-warning');
  }
  get queuedStat(): Locator {
    return this.root.getByTestId('summary-queue-length');
  }
  get stalledGroupsStat(): Locator {
    return this.root.getByTestId('summary-stalled-groups');
  }
  get qpsStat(): Locator {
    return this.root.getByTestId('summary-qps');
  }
  get pollAge(): Locator {
    return this.root.getByTestId('target-poll-age');
  }
}

export class OverviewPage {
  constructor(readonly page: Page) {}

  /** The card view (`?view=cards`); the default fleet table is pages/fleet-page.ts. */
  async goto(): Promise<void> {
    await this.page.goto('/?view=cards');
  }

  get heading(): Locator {
    return this.page.getByRole('heading', { level: 1, name: 'Targets' });
  }

  /** Every target card (articles in the target list). */
  get cards(): Locator {
    return this.page.getByRole('article');
  }

  /** The card whose title link is exactly `name`. */
  card(name: string): TargetCard {
    return new TargetCard(this.cards.filter({ has: this.page.getByRole('link', { name, exact: true }) }));
  }

  get liveStatus(): Locator {
    return this.page.getByTestId('live-status');
  }

  get stalledBanner(): Locator {
    return this.page.getByTestId('stalled-banner');
  }
}
