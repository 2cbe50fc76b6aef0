export { formatDate, formatNumber } from "./format";
export type { FormatOptions } from "./format";
