// Parsing helpers kept in plain JavaScript.
function parseDate(text) {
  const [year, month, day] = text.split("-").map(Number);
  return new Date(year, month - 1, day);
}

module.exports = { parseDate };
