"""Stock levels per SKU."""


class Inventory:
    """Counts units in stock."""

    def __init__(self):
        self.stock = {}

    def restock(self, sku, quantity):
        self.stock[sku] = self.stock.get(sku, 0) + quantity

    def reserve(self, sku, quantity):
        if self.stock.get(sku, 0) < quantity:
            raise RuntimeError(f"not enough {sku} in stock")
        self.stock[sku] -= quantity
