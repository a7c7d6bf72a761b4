import Foundation
import ImageCache
import ImageCodec

/// Disk-cache reads charged to a `MemoryLedger`: the file's buffer is charged before it is
/// allocated and released with it, wherever its bytes are by then (the memory cache, an answer
/// being written). A read the ledger's budget has no room for is refused before a byte is read.
///
/// The bridge between the cache, which knows nothing of images or budgets, and the ledger every
/// other large buffer of a request goes through.
public struct ChargedReadMemory: ReadMemory {
    /// Where reads are charged.
    public let ledger: MemoryLedger

    /// Reads charged to `ledger`.
    public init(ledger: MemoryLedger) {
        self.ledger = ledger
    }

    public func allocate(_ bytes: Int) -> ReadBuffer? {
        guard let charge = try? ledger.charge(bytes) else { return nil }
        // Pages from the kernel: a file read whole goes back to the system as soon as it goes.
        guard let pointer = PageMemory.allocate(bytes) else { return nil }
        return ReadBuffer(pointer: pointer) { pointer in
            PageMemory.free(pointer, bytes)
            withExtendedLifetime(charge) {}
        }
    }
}
