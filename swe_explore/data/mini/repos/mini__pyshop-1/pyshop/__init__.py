"""A tiny shop: carts, prices and discount codes."""

from pyshop.cart import Cart
from pyshop.pricing import apply_discount

__all__ = ["Cart", "apply_discount"]
