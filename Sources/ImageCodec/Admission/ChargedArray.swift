/// An array whose bytes are charged to the current task's ``MemoryLedger`` from before it is
/// allocated for as long as it lives: the one way the codec makes a buffer whose size grows
/// with an image (a bitmap's pixels, a decoder's rows, a resampler's ring, a filter's planes,
/// an encoder's planes). `scripts/check-allocations.sh` refuses any other in the render path.
///
/// The charge travels with the value: a bitmap made from these pixels keeps it, and the bytes
/// go back when the last copy of it goes. Outside a ledger (a client app), nothing is counted
/// and nothing is refused.
///
/// The elements are meant to be written in place by their one owner: a copy that is then
/// mutated would be a second, uncounted array.
struct ChargedArray<Element> {
    /// The elements: written in place by their owner (`elements.withUnsafeMutableBufferPointer`),
    /// never replaced by an array made elsewhere.
    var elements: [Element]
    /// What holds their bytes in the ledger; nil outside one.
    let charge: MemoryCharge?

    /// `count` copies of `value`.
    init(repeating value: Element, count: Int) throws(ImageCodecError) {
        charge = try Self.charge(count)
        elements = [Element](repeating: value, count: max(0, count))
    }

    /// `count` elements that `body` initialises, all of them.
    init(
        uninitializedCount count: Int,
        initializingWith body: (UnsafeMutableBufferPointer<Element>) throws(ImageCodecError) -> Void
    ) throws(ImageCodecError) {
        charge = try Self.charge(count)
        var failure: ImageCodecError?
        elements = [Element](unsafeUninitializedCapacity: max(0, count)) { buffer, initialized in
            do throws(ImageCodecError) {
                try body(buffer)
                initialized = buffer.count
            } catch {
                // Elements are trivial here (bytes, floats, SIMD vectors): none to deinitialise.
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
    }

    /// The elements of `array`, which the caller has just made and hands over: charged now.
    /// For arrays a library or `Array` API made in one go (a decoded row set a converter
    /// returned), never for a copy of a charged one.
    init(adopting array: [Element]) throws(ImageCodecError) {
        charge = try Self.charge(array.count)
        elements = array
    }

    /// The charge for `count` elements from the current ledger (nil outside one).
    private static func charge(_ count: Int) throws(ImageCodecError) -> MemoryCharge? {
        guard let ledger = MemoryLedger.current else { return nil }
        let (bytes, overflow) = max(0, count).multipliedReportingOverflow(by: MemoryLayout<Element>.stride)
        guard !overflow else { throw .memoryBudgetExceeded(bytes: .max, capacity: ledger.budget.capacity) }
        return try ledger.charge(bytes)
    }

    /// Number of elements.
    var count: Int { elements.count }

    /// Element `index`, read or written in place.
    subscript(index: Int) -> Element {
        get { elements[index] }
        _modify { yield &elements[index] }
    }
}

extension ChargedArray: Sendable where Element: Sendable {}
