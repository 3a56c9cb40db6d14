require "json"

# Stock levels per warehouse.
module Inventory
  class Stock
    def initialize(levels = {})
      @levels = levels
      @reserved = Hash.new(0)
    end

    # Reserves quantity of sku, failing when the warehouse does not hold enough.
    def reserve(sku, quantity)
      available = @levels.fetch(sku, 0) - @reserved[sku]
      raise ArgumentError, "only #{available} of #{sku} left" if available < quantity
      @reserved[sku] += quantity
    end

    def self.from_json(text)
      new(JSON.parse(text).transform_values(&:to_i))
    end
  end
end
