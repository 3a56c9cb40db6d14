package com.acme.billing;

import java.math.BigDecimal;
import java.util.List;

/** Issues invoices and computes their totals. */
public class InvoiceService {
    private final TaxTable taxes;

    public InvoiceService(TaxTable taxes) {
        this.taxes = taxes;
    }

    /** The total of the lines, tax included, rounded to cents. */
    public BigDecimal total(List<Line> lines, String country) {
        BigDecimal net = BigDecimal.ZERO;
        for (Line line : lines) {
            net = net.add(line.price().multiply(BigDecimal.valueOf(line.quantity())));
        }
        BigDecimal rate = taxes.rateFor(country);
        return net.add(net.multiply(rate)).setScale(2, java.math.RoundingMode.HALF_EVEN);
    }

    public record Line(String sku, BigDecimal price, int quantity) {}
}
