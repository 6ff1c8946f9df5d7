// Page object for the target page's recommendations, apply dialog, audit list and chart markers.
import type { Locator, Page } from '@playwright/test';

export class ChangesPanel {
  constructor(readonly page: Page) {}

  recommendation(rule: string): Locator {
    return this.page.getByTestId(`rec-${rule}`);
  }
  applyButton(rule: string): Locator {
    return this.page.getByTestId(`rec-apply-${rule}`);
  }
  get dialog(): Locator {
    return this.page.getByRole('dialog');
  }
  get dialogCurrent(): Locator {
    return this.dialog.getByTestId('apply-current');
  }
  get dialogProposed(): Locator {
    return this.dialog.getByTestId('apply-proposed');
  }
  get confirm(): Locator {
    return this.dialog.getByTestId('apply-confirm');
  }
  get audit(): Locator {
    return this.page.getByTestId('audit-panel');
  }
  auditRows(variable: string): Locator {
    return this.audit.locator(`tr[data-variable="${variable}"]`);
  }
  auditRow(id: number): Locator {
    return this.page.getByTestId(`audit-row-${id}`);
  }
  revertButton(id: number): Locator {
    return this.page.getByTestId(`audit-revert-${id}`);
  }
  chartMarkers(chartTestId: string): Locator {
    return this.page.getByTestId(`${chartTestId}-markers`);
  }
  /** The dashed lines the changes draw across a chart. */
  chartMarkerLines(chartTestId: string): Locator {
    return this.page.getByTestId(chartTestId).locator('.chart-marker-line');
  }
}
