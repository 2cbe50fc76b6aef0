"""Discount codes and price rules."""

DISCOUNT_CODES = {"SAVE10": 0.10, "HALF": 0.50}


def apply_discount(amount, code):
    """Return ``amount`` reduced by the discount ``code``; unknown codes raise KeyError."""
    rate = DISCOUNT_CODES[code]
    return round(amount * (1 - rate), 2)


def format_price(amount, currency="EUR"):
    """Format an amount for display."""
    return f"{amount:.2f} {currency}"
