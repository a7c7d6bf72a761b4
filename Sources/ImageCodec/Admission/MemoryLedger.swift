import Locking

/// What one piece of work — a `serve` request, a thumbnail of a batch — holds of a
/// ``MemoryBudget``: every large buffer it makes is charged here as it is allocated and given
/// back as it is freed, wherever it is by then.
///
/// A ledger is the current task's (``current``, set with `charging(_:)`): the codec's buffers — a
/// decode's rows and result, a resampler's ring, a turn's copy, a filter's planes, an encoder's
/// planes and output — charge whichever ledger the task runs under, through `ChargedArray`
/// and the other charged buffers, the only way the codec makes one. Work with no ledger is not
/// counted (a client app decoding a cell). So a feature added later inherits the bound instead
/// of having to remember it.
///
/// Two ways to pay:
/// - **Ahead** (``prepay(_:orAlone:)``): a scheduler that admits work by its plan (a decode's
///   ``DecodePlan/memoryBytes``, an encoder's ``ImageEncoder/plannedBytes(width:height:channels:format:)``)
///   reserves it all before the work starts, so the work never waits for memory half-way;
///   charges then draw on that. What no charge drew goes back with ``settle()``.
/// - **As it goes**: a charge the prepayment cannot cover is taken from the budget itself, and
///   when the budget has no room the allocation fails with
///   ``ImageCodecError/memoryBudgetExceeded(bytes:capacity:)`` instead of passing the budget —
///   a plan that undercounts costs a request, never the process.
///
/// ```swift
/// let ledger = MemoryLedger(budget: budget)
/// guard ledger.prepay(plan.memoryBytes) else { throw Overloaded() }
/// defer { ledger.settle() }
/// let thumbnail = try ledger.charging { try source.decode(options) }
/// ```
public final class MemoryLedger: @unchecked Sendable {
    // @unchecked: every mutable field is only touched while `lock` is held.
    @TaskLocal private static var taskLedger: MemoryLedger?

    /// The ledger the current task's buffers are charged to (in `charging(_:)`, and in
    /// tasks made there, which inherit it); nil: none, nothing is counted.
    public static var current: MemoryLedger? { taskLedger }

    /// Runs `body` with this ledger as ``current``: what the codec allocates meanwhile, on this
    /// task or tasks it makes, is charged here.
    public func charging<Value, Failure: Error>(_ body: () throws(Failure) -> Value) throws(Failure) -> Value {
        try Self.$taskLedger.withValue(self) { Result(catching: body) }.get()
    }

    /// The same for asynchronous work: a request's whole answer.
    @_disfavoredOverload
    public func charging<Value: Sendable>(_ body: () async -> Value) async -> Value {
        await Self.$taskLedger.withValue(self, operation: body)
    }

    /// Where the bytes are held.
    public let budget: MemoryBudget
    private let lock = Lock()
    /// Reserved ahead and not drawn by any charge yet.
    private var undrawn = 0
    /// Numbers the prepayments: a charge drawn from one that has been settled gives its bytes to
    /// the budget, not back to the (new) prepayment.
    private var prepayment = 0
    private var prepaymentOpen = false
    /// Bytes the ledger's live charges hold, and the most they held at once.
    private var charged = 0
    private var peak = 0

    /// A ledger drawing on `budget`.
    public init(budget: MemoryBudget) {
        self.budget = budget
    }

    /// Reserves `bytes` in the budget for the work about to start; false, and nothing
    /// reserved, when they do not fit (see ``MemoryBudget/reserve(_:orAlone:)`` for `orAlone`).
    /// A ledger holds one prepayment at a time: a second adds to the first.
    public func prepay(_ bytes: Int, orAlone: Bool = false) -> Bool {
        lock.withLock {
            guard budget.reserve(max(0, bytes), orAlone: orAlone) else { return false }
            if !prepaymentOpen {
                prepaymentOpen = true
                prepayment += 1
            }
            undrawn += max(0, bytes)
            return true
        }
    }

    /// Ends the prepayment: what no charge drew goes back to the budget now; what charges drew
    /// goes back as each is released.
    public func settle() {
        let returned = lock.withLock { () -> Int in
            defer { (undrawn, prepaymentOpen) = (0, false) }
            return undrawn
        }
        // Outside the lock: the budget's observers (a queue waiting for memory) may prepay.
        budget.release(returned)
    }

    /// Charges `bytes` about to be allocated: from the prepayment while it has them, the rest
    /// from the budget. Throws ``ImageCodecError/memoryBudgetExceeded(bytes:capacity:)`` when the
    /// budget cannot hold the rest.
    public func charge(_ bytes: Int) throws(ImageCodecError) -> MemoryCharge {
        let charge = MemoryCharge(ledger: self)
        try charge.resize(to: bytes)
        return charge
    }

    /// Bytes the ledger's charges hold now.
    public var bytesCharged: Int { lock.withLock { charged } }

    /// The most its charges held at once.
    public var peakBytesCharged: Int { lock.withLock { peak } }

    /// Bytes reserved ahead that no charge has drawn.
    public var bytesPrepaid: Int { lock.withLock { undrawn } }

    // MARK: For MemoryCharge

    /// Takes `bytes` more for a charge that has drawn on prepayment `generation` (nil: none
    /// yet): the parts drawn and taken from the budget, or nil when the budget has no room.
    fileprivate func take(_ bytes: Int, drawnFrom generation: Int?) -> (drawn: Int, direct: Int, generation: Int?)? {
        lock.withLock { () -> (Int, Int, Int?)? in
            let canDraw = prepaymentOpen && (generation == nil || generation == prepayment)
            let drawn = canDraw ? min(undrawn, bytes) : 0
            let direct = bytes - drawn
            if direct > 0, !budget.reserve(direct) { return nil }
            undrawn -= drawn
            charged += bytes
            peak = max(peak, charged)
            return (drawn, direct, drawn > 0 ? prepayment : generation)
        }
    }

    /// Gives back `drawn` bytes drawn from prepayment `generation` and `direct` bytes taken from
    /// the budget.
    fileprivate func give(drawn: Int, direct: Int, generation: Int?) {
        let returned = lock.withLock { () -> Int in
            charged -= drawn + direct
            guard drawn > 0, prepaymentOpen, generation == prepayment else { return drawn + direct }
            undrawn += drawn
            return direct
        }
        budget.release(returned)
    }

    fileprivate var capacity: Int { budget.capacity }
}

/// The bytes of one buffer, held in a ``MemoryLedger`` from before the buffer is allocated until
/// the charge is released or goes (its owner frees the buffer). Made by
/// ``MemoryLedger/charge(_:)``.
public final class MemoryCharge: @unchecked Sendable {
    // @unchecked: `drawn`, `direct` and `generation` are only touched while `lock` is held.
    private let ledger: MemoryLedger
    private let lock = Lock()
    private var drawn = 0
    private var direct = 0
    private var generation: Int?

    fileprivate init(ledger: MemoryLedger) {
        self.ledger = ledger
    }

    deinit {
        ledger.give(drawn: drawn, direct: direct, generation: generation)
    }

    /// Bytes held.
    public var bytes: Int { lock.withLock { drawn + direct } }

    /// Holds `bytes` instead (a buffer that grows as bytes arrive, or shrinks to what it kept):
    /// growth as ``MemoryLedger/charge(_:)`` takes it, throwing when the budget has no room (the
    /// charge stays as it was).
    public func resize(to bytes: Int) throws(ImageCodecError) {
        let bytes = max(0, bytes)
        try lock.withLock { () throws(ImageCodecError) in
            let held = drawn + direct
            if bytes > held {
                guard let taken = ledger.take(bytes - held, drawnFrom: generation) else {
                    throw .memoryBudgetExceeded(bytes: bytes - held, capacity: ledger.capacity)
                }
                drawn += taken.drawn
                direct += taken.direct
                generation = taken.generation
            } else if bytes < held {
                // What came from the budget goes first: the prepayment keeps what it lent longest.
                let fromDirect = min(direct, held - bytes)
                let fromDrawn = held - bytes - fromDirect
                ledger.give(drawn: fromDrawn, direct: fromDirect, generation: generation)
                direct -= fromDirect
                drawn -= fromDrawn
            }
        }
    }
}
