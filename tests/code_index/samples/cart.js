import { formatMoney } from "./money.js";

/**
 * A shopping cart holding line items in integer cents.
 */
export class Cart {
  constructor(currency) {
    this.currency = currency;
    this.items = [];
  }

  add(sku, quantity, unitPriceCents) {
    if (quantity <= 0) throw new RangeError("quantity must be positive");
    this.items.push({ sku, quantity, unitPriceCents });
    return this;
  }

  totalCents() {
    return this.items.reduce((sum, item) => sum + item.quantity * item.unitPriceCents, 0);
  }
}

export function describeCart(cart) {
  const lines = cart.items.map((item) => `${item.quantity} x ${item.sku}`);
  return `${lines.join(", ")} = ${formatMoney(cart.totalCents(), cart.currency)}`;
}

export const emptyCart = (currency = "EUR") => {
  const cart = new Cart(currency);
  cart.createdAt = new Date().toISOString();
  return cart;
};
