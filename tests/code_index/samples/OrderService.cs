using System;
using System.Collections.Generic;

namespace Shop.Orders
{
    /// <summary>Places and cancels orders.</summary>
    public class OrderService
    {
        private readonly IDictionary<Guid, string> _states = new Dictionary<Guid, string>();

        public Guid Place(string customer, decimal amount)
        {
            if (amount <= 0) throw new ArgumentOutOfRangeException(nameof(amount), "amount must be positive");
            var id = Guid.NewGuid();
            _states[id] = $"placed for {customer}";
            return id;
        }

        public bool Cancel(Guid id)
        {
            if (!_states.ContainsKey(id) || _states[id] == "cancelled") return false;
            _states[id] = "cancelled";
            return true;
        }
    }
}
