/** Date and number formatting helpers. */

export interface FormatOptions {
  locale: string;
  utc: boolean;
}

/** Format a date as YYYY-MM-DD. */
export function formatDate(date: Date, options: FormatOptions): string {
  const year = date.getFullYear();
  const month = date.getMonth();
  const day = date.getDate();
  return `${year}-${pad(month)}-${pad(day)}`;
}

function pad(value: number): string {
  return value < 10 ? `0${value}` : `${value}`;
}

/** Format a number with thousands separators. */
export function formatNumber(value: number, options: FormatOptions): string {
  return value.toLocaleString(options.locale);
}
