// Page object for the overview's fleet table ("/", the default view). Returns locators; specs assert.
import type { Locator, Page } from '@playwright/test';

export class FleetPage {
  constructor(
    readonly page: Page,
    readonly baseURL: string,
  ) {}

  async goto(query = ''): Promise<void> {
    await this.page.goto(`${this.baseURL}/${query}`);
  }

  get table(): Locator {
    return this.page.getByRole('table', { name: 'targets' });
  }
  /** The rendered rows (a window of the fleet: the table is virtualised), in display order. */
  get rows(): Locator {
    return this.page.locator('[data-testid^="fleet-row-"]');
  }
  row(name: string): Locator {
    return this.page.getByTestId(`fleet-row-${name}`);
  }
  sortBy(column: string): Locator {
    return this.page.getByTestId(`fleet-sort-${column}`);
  }
  get statusFilter(): Locator {
    return this.page.getByTestId('fleet-status-filter');
  }
  get tagFilter(): Locator {
    return this.page.getByTestId('fleet-tag-filter');
  }
  get search(): Locator {
    return this.page.getByTestId('fleet-search');
  }
  get count(): Locator {
    return this.page.getByTestId('fleet-count');
  }
  get scroller(): Locator {
    return this.page.getByTestId('fleet-scroll');
  }

  /** Names of the rendered rows from the top of the view (the virtualiser may render them out of DOM order). */
  async visibleNames(): Promise<string[]> {
    const rows = await this.rows.evaluateAll((els) =>
      els.map((el) => ({ name: el.getAttribute('data-name') ?? '', top: el.getBoundingClientRect().top })),
    );
    return rows.toSorted((a, b) => a.top - b.top).map((r) => r.name);
  }
}
