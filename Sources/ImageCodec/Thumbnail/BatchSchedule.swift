/// The order a batch decodes in, by planned memory: the largest decode that fits the budget
/// beside those running starts next, so big decodes pair with small ones instead of with each
/// other, and a decode that does not fit waits for memory to free. With nothing running, the
/// largest starts, however large.
///
/// Two large decodes (above `largeCost`) run side by side only when no small one is left to
/// pair with: with a budget that fits both, pairing them earlier only raises the peak.
///
/// Largest first also keeps the end of a batch from leaving one core working alone on a big
/// file. The memory itself is a `MemoryBudget`, the type every decode admission in the package
/// uses (the pipeline's decode queue, the service's requests).
struct BatchSchedule<Item> {
    private var pending: [(item: Item, cost: Int)]
    /// What the running decodes hold.
    let budget: MemoryBudget

    init(_ items: [(item: Item, cost: Int)], budget: Int) {
        pending = items.sorted { $0.cost > $1.cost }
        self.budget = MemoryBudget(capacity: budget)
    }

    var isEmpty: Bool { pending.isEmpty }

    /// The next item to start, if one may start now; its cost counts until `finished(cost:)`.
    mutating func next() -> (item: Item, cost: Int)? {
        // Alone, the largest starts (over the budget or not: it has to run alone some time);
        // beside others, the largest that fits, except that a large one starts beside another
        // large one only when no small one is left to pair it with.
        let smallPending = pending.contains { $0.cost <= Self.largeCost }
        guard
            let index = pending.firstIndex(where: { item in
                if largeRunning > 0, item.cost > Self.largeCost, smallPending { return false }
                return budget.reserve(item.cost, orAlone: true)
            })
        else { return nil }
        if pending[index].cost > Self.largeCost { largeRunning += 1 }
        return pending.remove(at: index)
    }

    /// A started item no longer holds its memory.
    mutating func finished(cost: Int) {
        budget.release(cost)
        if cost > Self.largeCost { largeRunning -= 1 }
    }

    /// Decodes planned above this are large: a 16-20 MP progressive JPEG (50-60 MB of
    /// coefficients), a HEIC. Two of them side by side save time only when nothing smaller is
    /// left to run beside one; before that, pairing them only raises the peak.
    static var largeCost: Int { 48 << 20 }
    private var largeRunning = 0
}
