/// The order a batch decodes in, by planned memory: the largest decode that fits the budget
/// beside those running starts next, so big decodes pair with small ones instead of with each
/// other, and a decode that does not fit waits for memory to free. With nothing running, the
/// largest starts, however large.
///
/// Largest first also keeps the end of a batch from leaving one core working alone on a big
/// file.
struct BatchSchedule<Item> {
    private var pending: [(item: Item, cost: Int)]
    private var runningCost = 0
    private var running = 0
    /// Bytes the running decodes may hold together.
    let budget: Int

    init(_ items: [(item: Item, cost: Int)], budget: Int) {
        pending = items.sorted { $0.cost > $1.cost }
        self.budget = budget
    }

    var isEmpty: Bool { pending.isEmpty }

    /// The next item to start, if one may start now; its cost counts until `finished(cost:)`.
    mutating func next() -> (item: Item, cost: Int)? {
        // Alone, the largest starts (over the budget or not: it has to run alone some time);
        // beside others, the largest that fits.
        guard let index = running == 0 ? pending.indices.first : pending.firstIndex(where: { runningCost + $0.cost <= budget })
        else { return nil }
        let chosen = pending.remove(at: index)
        runningCost += chosen.cost
        running += 1
        return chosen
    }

    /// A started item no longer holds its memory.
    mutating func finished(cost: Int) {
        runningCost -= cost
        running -= 1
    }
}
