// Sepet (cart) widget for the storefront: keeps line items in localStorage,
// validates quantities, and posts the order to the API.
"use strict";

const STORAGE_KEY = "orders.cart.v1";
const API_BASE = "/api";
const MAX_QUANTITY = 99;
const PRICE_FORMAT = new Intl.NumberFormat("tr-TR", { style: "currency", currency: "TRY" });

/** Formats kuruş (integer cents) as "1.234,56 ₺". */
export function formatPrice(cents) {
  return PRICE_FORMAT.format(cents / 100);
}

/** Creates a random idempotency key so a double click never creates two orders. */
export function newIdempotencyKey() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Debounce: runs fn only after `wait` ms without a new call. */
export function debounce(fn, wait) {
  let timer = null;
  return function debounced(...args) {
    clearTimeout(timer);
    timer = setTimeout(() => fn.apply(this, args), wait);
  };
}

export class CartStore {
  constructor(storage = window.localStorage) {
    this.storage = storage;
    this.items = this.load();
  }

  load() {
    try {
      return JSON.parse(this.storage.getItem(STORAGE_KEY) || "[]");
    } catch (err) {
      console.warn("cart storage corrupted, starting empty", err);
      return [];
    }
  }

  save() {
    this.storage.setItem(STORAGE_KEY, JSON.stringify(this.items));
  }

  add(sku, name, unitPriceCents, quantity = 1) {
    const existing = this.items.find((item) => item.sku === sku);
    if (existing) {
      existing.quantity = Math.min(MAX_QUANTITY, existing.quantity + quantity);
    } else {
      this.items.push({ sku, name, unitPriceCents, quantity });
    }
    this.save();
  }

  remove(sku) {
    this.items = this.items.filter((item) => item.sku !== sku);
    this.save();
  }

  totalCents() {
    return this.items.reduce((sum, item) => sum + item.unitPriceCents * item.quantity, 0);
  }

  /** Returns a list of problems; an empty list means the cart can be checked out. */
  validate() {
    const problems = [];
    if (this.items.length === 0) {
      problems.push("Sepetiniz boş.");
    }
    for (const item of this.items) {
      if (!Number.isInteger(item.quantity) || item.quantity < 1) {
        problems.push(`${item.name}: adet en az 1 olmalı.`);
      } else if (item.quantity > MAX_QUANTITY) {
        problems.push(`${item.name}: en fazla ${MAX_QUANTITY} adet.`);
      }
    }
    return problems;
  }

  close() {
    this.items = [];
    this.storage.removeItem(STORAGE_KEY);
  }
}

export class CartWidget {
  constructor(root, store, fetchImpl = window.fetch.bind(window)) {
    this.root = root;
    this.store = store;
    this.fetch = fetchImpl;
    this.pendingKey = null;
    this.onClick = (event) => this.handle(event);
    this.root.addEventListener("click", this.onClick);
    this.render = debounce(this.render.bind(this), 16);
  }

  render() {
    const rows = this.store.items
      .map(
        (item) => `<li data-sku="${item.sku}">${item.name} × ${item.quantity}
          <span>${formatPrice(item.unitPriceCents * item.quantity)}</span>
          <button data-action="remove">Sil</button></li>`,
      )
      .join("");
    this.root.innerHTML = `<ul class="cart">${rows}</ul>
      <p class="total">Toplam: ${formatPrice(this.store.totalCents())}</p>
      <button data-action="checkout">Siparişi tamamla</button>`;
  }

  /** Delegated click handler: remove buttons and the checkout button. */
  handle(event) {
    const action = event.target.dataset && event.target.dataset.action;
    if (action === "remove") {
      const sku = event.target.closest("li").dataset.sku;
      this.store.remove(sku);
      this.render();
    } else if (action === "checkout") {
      event.preventDefault();
      this.checkout().catch((err) => this.showError(err.message));
    }
  }

  /** Posts the cart as an order; reuses the same idempotency key until it succeeds. */
  async checkout() {
    const problems = this.store.validate();
    if (problems.length > 0) {
      this.showError(problems.join(" "));
      return null;
    }
    this.pendingKey = this.pendingKey || newIdempotencyKey();
    const body = {
      customer_id: this.root.dataset.customer,
      items: this.store.items.map((item) => ({
        sku: item.sku,
        description: item.name,
        quantity: item.quantity,
        unit_price: (item.unitPriceCents / 100).toFixed(2),
      })),
    };
    const response = await this.fetch(`${API_BASE}/orders`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Idempotency-Key": this.pendingKey },
      body: JSON.stringify(body),
    });
    if (!response.ok) {
      const payload = await response.json().catch(() => ({}));
      throw new Error(payload.error || `Sipariş oluşturulamadı (${response.status})`);
    }
    this.pendingKey = null;
    this.store.close();
    this.render();
    return response.json();
  }

  showError(message) {
    let box = this.root.querySelector(".cart-error");
    if (!box) {
      box = document.createElement("div");
      box.className = "cart-error";
      this.root.prepend(box);
    }
    box.textContent = message;
  }

  close() {
    this.root.removeEventListener("click", this.onClick);
    this.root.innerHTML = "";
  }
}
