"""Shopping cart."""

from pyshop.pricing import apply_discount


class Cart:
    """Items with quantities and an optional discount code."""

    def __init__(self):
        self.items = {}
        self.discount_code = None

    def add(self, sku, price, quantity=1):
        """Add ``quantity`` units of ``sku`` at ``price`` each."""
        if quantity < 1:
            raise ValueError("quantity must be positive")
        old_price, old_qty = self.items.get(sku, (price, 0))
        self.items[sku] = (price, old_qty + quantity)

    def remove(self, sku):
        """Remove every unit of ``sku``."""
        self.items.pop(sku, None)

    def subtotal(self):
        """Sum of price times quantity."""
        return sum(price * qty for price, qty in self.items.values())

    def total(self):
        """Subtotal after the discount code."""
        subtotal = self.subtotal()
        return subtotal
