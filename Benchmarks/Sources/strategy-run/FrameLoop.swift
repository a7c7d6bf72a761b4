import BenchmarkSupport
import Foundation

/// One thread playing the UI's main thread at 120 Hz over the scroll trace.
///
/// Each frame: cells that scrolled off cancel their request (if cancellation is on; or park
/// it with ScrolledOffTasks, with parking on, as the grid article's option); cells
/// that appeared are configured as a client does it (a synchronous memory-cache lookup; on a
/// miss an asynchronous request); images that arrived since the last frame are set (decoded
/// here if they arrived encoded); the prefetch window moves with the scroll. The frame's work is
/// timed with a monotonic clock. A frame that overruns pushes the next one to the next tick,
/// and the scroll position follows the clock, so a slow frame is a visible jump.
final class FrameLoop {
    struct Options {
        var prefetchRows = 2
        var prefetches = true
        var cancels = true
        /// With `cancels`: park scrolled-off requests (ScrolledOffTasks) instead of cancelling.
        var parks = false
    }

    private struct Cell {
        let appeared: UInt64
        let pass: Int
        var shown = false
        var request: (any Cancellable)?
    }

    /// What one pass (1: first visit, 2: revisit, 3: down again) saw.
    struct PassMetrics: Codable {
        var pass: Int
        var frames = 0
        var framesOver8ms = 0
        var framesOver16ms = 0
        /// 120 Hz ticks with no frame because the one before overran.
        var missedTicks = 0
        var longestFrameMs = 0.0
        var cellAppearances = 0
        /// Cells whose image was there in the frame they appeared.
        var shownAtOnce = 0
        /// Cells that scrolled off before their image arrived.
        var neverShown = 0
        /// Sum over 120 Hz ticks (frames run and ticks missed) of the cells on screen without
        /// their image.
        var blankCellFrames = 0
        /// Milliseconds from the start of the frame a cell appeared in to its image being set.
        var timeToImageMs: [Double] = []
    }

    struct Result: Codable {
        var passes: [PassMetrics]
        var requestsStarted = 0
        var cancellations = 0
        var imagesShown = 0
        /// (seconds, milliseconds, pass) per frame.
        var frames: [[Double]] = []
        /// (seconds, resident MiB, memory-cache MiB) ten times a second.
        var memory: [[Double]] = []
    }

    private let grid: Grid
    private let trace: ScrollTrace
    private let source: any GridImageSource
    private let options: Options
    private let arrivals = Arrivals()
    private var cells: [Int: Cell] = [:]
    private var prefetching = Set<Int>()

    init(grid: Grid, trace: ScrollTrace, source: any GridImageSource, options: Options) {
        self.grid = grid
        self.trace = trace
        self.source = source
        self.options = options
    }

    func run() -> Result {
        // The UI's main thread runs at user-interactive QoS: above the decoding threads. Raising
        // a thread's priority needs privileges; without them the run goes on at the default.
        if let thread = Self.threadID() { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread, -10) }
        var result = Result(passes: (1...3).map { PassMetrics(pass: $0) })
        let period = 1e9 / 120
        let start = Measure.now()
        var tick = 0
        while true {
            Self.sleep(until: start + UInt64(Double(tick) * period))
            let frameStart = Measure.now()
            let time = Double(frameStart - start) / 1e9
            guard time <= trace.duration else { break }
            let pass = trace.pass(at: time)
            frame(time: time, pass: pass, frameStart: frameStart, result: &result)
            let frameEnd = Measure.now()
            let milliseconds = Double(frameEnd - frameStart) / 1e6
            var metrics = result.passes[pass - 1]
            metrics.frames += 1
            if milliseconds > 1000 / 120 { metrics.framesOver8ms += 1 }
            if milliseconds > 1000 / 60 { metrics.framesOver16ms += 1 }
            metrics.longestFrameMs = max(metrics.longestFrameMs, milliseconds)
            let nextTick = max(tick + 1, Int((Double(frameEnd - start) / period).rounded(.up)))
            // Per elapsed tick, not per frame run: the screen keeps showing these blanks through
            // the ticks an overrunning frame missed, and counting frames would flatter the
            // strategies that jank most.
            metrics.blankCellFrames += cells.values.filter { !$0.shown }.count * (nextTick - tick)
            metrics.missedTicks += nextTick - tick - 1
            result.passes[pass - 1] = metrics
            result.frames.append([time, milliseconds, Double(pass)])
            if tick % 12 == 0 {
                result.memory.append([time, Double(Self.residentBytes()) / 1_048_576, Double(source.memoryCost) / 1_048_576])
            }
            tick = nextTick
        }
        for cell in cells.values { cell.request?.cancel() }
        source.stopPrefetching(Array(prefetching))
        return result
    }

    private func frame(time: Double, pass: Int, frameStart: UInt64, result: inout Result) {
        let rows = grid.visibleRows(at: trace.offset(at: time))
        let visible = Set(grid.products(in: rows))
        // Cells reused for others: cancel what they no longer need.
        for product in cells.keys where !visible.contains(product) {
            guard let cell = cells.removeValue(forKey: product) else { continue }
            if !cell.shown {
                result.passes[cell.pass - 1].neverShown += 1
                if options.cancels, let request = cell.request {
                    if options.parks {
                        request.park()
                    } else {
                        request.cancel()
                    }
                    result.cancellations += 1
                }
            }
        }
        // New cells: the synchronous lookup, else a request.
        for product in visible.sorted() where cells[product] == nil {
            result.passes[pass - 1].cellAppearances += 1
            var cell = Cell(appeared: frameStart, pass: pass)
            if source.cachedImage(for: product) != nil {
                cell.shown = true
                result.passes[pass - 1].shownAtOnce += 1
                result.passes[pass - 1].timeToImageMs.append(Double(Measure.now() - frameStart) / 1e6)
                result.imagesShown += 1
            } else {
                let arrivals = arrivals
                cell.request = source.load(product) { payload in arrivals.add(product, payload) }
                result.requestsStarted += 1
            }
            cells[product] = cell
        }
        // Images that arrived: set them (decoding here what arrived encoded).
        for (product, payload) in arrivals.take() {
            guard var cell = cells[product], !cell.shown, let payload, source.display(payload) != nil else { continue }
            cell.shown = true
            cell.request = nil
            cells[product] = cell
            result.passes[cell.pass - 1].timeToImageMs.append(Double(Measure.now() - cell.appeared) / 1e6)
            result.imagesShown += 1
        }
        guard options.prefetches else { return }
        let ahead = Set(grid.products(in: grid.rowsAhead(of: rows, direction: trace.direction(at: time), count: options.prefetchRows)))
            .subtracting(visible)
        let stale = prefetching.subtracting(ahead).subtracting(visible)
        if !stale.isEmpty { source.stopPrefetching(Array(stale)) }
        let fresh = ahead.subtracting(prefetching)
        if !fresh.isEmpty { source.startPrefetching(fresh.sorted()) }
        prefetching = ahead
    }

    private static func sleep(until deadline: UInt64) {
        let now = Measure.now()
        guard deadline > now else { return }
        var remaining = timespec(tv_sec: Int((deadline - now) / 1_000_000_000), tv_nsec: Int((deadline - now) % 1_000_000_000))
        nanosleep(&remaining, nil)
    }

    /// This thread's kernel id, from the /proc/thread-self link ("PID/task/TID").
    private static func threadID() -> id_t? {
        var buffer = [CChar](repeating: 0, count: 64)
        let length = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .split(separator: "/").last.flatMap { id_t($0) }
    }

    /// Resident set size now, from /proc/self/statm.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }
}

/// Images that arrived since the last frame, from any thread.
final class Arrivals: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [(Int, Payload?)] = []

    func add(_ product: Int, _ payload: Payload?) { lock.withLock { items.append((product, payload)) } }

    func take() -> [(Int, Payload?)] {
        lock.withLock {
            defer { items.removeAll() }
            return items
        }
    }
}
