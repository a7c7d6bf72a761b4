/// The order a batch decodes in, by planned memory: the largest decode that fits the budget
/// beside those running starts next, so big decodes pair with small ones instead of with each
/// other, and a decode that does not fit waits for memory to free. With nothing running, the
/// largest starts, however large.
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
        // beside others, the largest that fits.
        guard let index = pending.firstIndex(where: { budget.reserve($0.cost, orAlone: true) }) else { return nil }
        return pending.remove(at: index)
    }

    /// A started item no longer holds its memory.
    mutating func finished(cost: Int) {
        budget.release(cost)
    }
}
