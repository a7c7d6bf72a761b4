/// The product grid: 2 columns, rows of 130 pt (a 400 px thumbnail at 3x is 133 pt), about
/// four rows on screen.
struct Grid {
    let products: Int
    let columns = 2
    let rowHeight = 130.0
    let viewportHeight = 4 * 130.0

    var rows: Int { (products + columns - 1) / columns }
    var maximumOffset: Double { Double(rows) * rowHeight - viewportHeight }

    /// Rows (partly) on screen at scroll offset `offset`.
    func visibleRows(at offset: Double) -> Range<Int> {
        let first = max(0, Int(offset / rowHeight))
        let last = min(rows - 1, Int((offset + viewportHeight - 0.001) / rowHeight))
        return first..<(last + 1)
    }

    func products(in rows: Range<Int>) -> [Int] {
        rows.flatMap { row in (row * columns..<min(products, (row + 1) * columns)) }
    }

    /// The `count` rows past the screen's edge in the direction of travel: what a client prefetches.
    func rowsAhead(of visible: Range<Int>, direction: Int, count: Int) -> Range<Int> {
        if direction >= 0 { return min(rows, visible.upperBound)..<min(rows, visible.upperBound + count) }
        return max(0, visible.lowerBound - count)..<visible.lowerBound
    }
}

/// The scroll: down to the end at flick speed, back up to the top (every image is a revisit),
/// and down again, with a short rest at each end.
struct ScrollTrace {
    struct Segment {
        let start: Double
        let duration: Double
        let from: Double
        let to: Double
        /// 1 first visit, 2 revisit (up), 3 down again.
        let pass: Int
    }

    let segments: [Segment]

    /// `speed` in points per second: 3000 pt/s is a brisk, sustained flick (iOS flicks start at
    /// 2000-8000 pt/s), about 23 rows or 46 cells a second.
    init(grid: Grid, speed: Double = 3000, rest: Double = 0.3) {
        let travel = grid.maximumOffset / speed
        var segments: [Segment] = []
        var time = 0.0
        for (pass, (from, to)) in [(0.0, grid.maximumOffset), (grid.maximumOffset, 0.0), (0.0, grid.maximumOffset)].enumerated() {
            segments.append(Segment(start: time, duration: travel, from: from, to: to, pass: pass + 1))
            time += travel
            segments.append(Segment(start: time, duration: rest, from: to, to: to, pass: pass + 1))
            time += rest
        }
        self.segments = segments
    }

    var duration: Double { segments.last.map { $0.start + $0.duration } ?? 0 }

    private func segment(at time: Double) -> Segment {
        segments.last { $0.start <= time } ?? segments[0]
    }

    func offset(at time: Double) -> Double {
        let segment = segment(at: time)
        let progress = segment.duration > 0 ? min(1, max(0, (time - segment.start) / segment.duration)) : 1
        return segment.from + (segment.to - segment.from) * progress
    }

    func pass(at time: Double) -> Int { segment(at: time).pass }

    /// +1 scrolling down, -1 up, 0 resting.
    func direction(at time: Double) -> Int {
        let segment = segment(at: time)
        return segment.to > segment.from ? 1 : (segment.to < segment.from ? -1 : 0)
    }
}
