import Dispatch
import Foundation
import Locking

/// A `DiskCache` used from async code: its I/O kept off the cooperative thread pool (a 64 MB
/// read or an fsync'd write there would stall every continuation on a 2-core phone). Reads run
/// on a concurrent dispatch queue of their own, writes and removals in order on a serial one,
/// so a caller can queue a write after delivering its result. What waits to be written is
/// served from memory meanwhile, so a read right after a store never misses; a queued removal
/// hides the entry at once.
///
/// The backlog is bounded: writes hold at most `maximumPendingBytes` while they wait, and a
/// store that does not fit is dropped (counted through `onDrop`) — a slow disk then costs a
/// later cold start, never memory without bound. Removals are never dropped.
///
/// ```swift
/// let queue = DiskCacheQueue(disk: try DiskCache(directory: url), onError: { errors.increment() })
/// queue.store(body, metadata: DiskCacheMetadata(etag: etag), forKey: key)   // returns at once
/// let entry = await queue.entry(forKey: key)                              // sees the queued write
/// ```
public final class DiskCacheQueue: @unchecked Sendable {
    // @unchecked: `pending` and `epoch` are only touched while `lock` is held.
    /// The cache the queue reads and writes.
    public let disk: DiskCache
    private let reads = DispatchQueue(label: "DiskCacheQueue.reads", qos: .userInitiated, attributes: .concurrent)
    private let writes = DispatchQueue(label: "DiskCacheQueue.writes", qos: .utility)
    private let lock = Lock()
    /// The latest queued write (an entry) or removal (nil) per key, and its ticket.
    private var pending: [String: (ticket: Int, entry: DiskCacheEntry?)] = [:]
    private var nextTicket = 0
    /// Bumped by `removeAll`: writes queued before it are dropped.
    private var epoch = 0
    /// Bytes the queued writes hold.
    private var pendingBytes = 0
    /// What the queued writes may hold at once.
    public let maximumPendingBytes: Int
    private let onError: @Sendable () -> Void
    private let onDrop: @Sendable () -> Void

    /// A queue for `disk`; `onError` is called (on a queue thread) for each read or write the
    /// disk refused: a failed read is a miss, a failed write is dropped. `onDrop` is called for
    /// each store dropped because the backlog held `maximumPendingBytes` already.
    public init(
        disk: DiskCache, maximumPendingBytes: Int = 64 << 20, onError: @escaping @Sendable () -> Void = {},
        onDrop: @escaping @Sendable () -> Void = {}
    ) {
        self.disk = disk
        self.maximumPendingBytes = maximumPendingBytes
        self.onError = onError
        self.onDrop = onDrop
    }

    /// The entry for `key`, expired or not (check `metadata.expires` where that matters): a
    /// queued write's, else the disk's, read on the queue's threads; a disk that cannot be read
    /// is a miss.
    public func entry(forKey key: String) async -> DiskCacheEntry? {
        do throws(DiskCacheError) {
            return try await entry(forKey: key, memory: PlainReadMemory())
        } catch {
            return nil // plain memory is never refused
        }
    }

    /// `entry(forKey:)`, the file read into memory from `memory`: throws
    /// ``DiskCacheError/noMemory(bytes:)`` when it has no room (and only then: a disk that
    /// cannot be read is a miss).
    public func entry(forKey key: String, memory: any ReadMemory) async throws(DiskCacheError) -> DiskCacheEntry? {
        if let queued = lock.withLock({ pending[key] }) { return queued.entry }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<DiskCacheEntry?, DiskCacheError>, Never>) in
            reads.async { [disk, onError] in
                do throws(DiskCacheError) {
                    continuation.resume(returning: .success(try disk.entry(forKey: key, allowingExpired: true, memory: memory)))
                } catch {
                    if case .noMemory = error { return continuation.resume(returning: .failure(error)) }
                    onError()
                    continuation.resume(returning: .success(nil))
                }
            }
        }
        return try result.get()
    }

    /// Queues storing `data` under `key`; until it is written, `entry(forKey:)` returns it.
    /// Dropped when the backlog is full.
    public func store(_ data: Data, metadata: DiskCacheMetadata, forKey key: String) {
        enqueue(key, visible: DiskCacheEntry(key: key, data: data, metadata: metadata), holding: data.count) { (disk) throws(DiskCacheError) in
            try disk.setValue(data, forKey: key, metadata: metadata)
        }
    }

    /// Queues making an entry (encoding a thumbnail, say) and storing it: the work runs on the
    /// write queue, and the entry is not visible before it is written. `holding` is what the
    /// work keeps alive until then (the bitmap it encodes); dropped when the backlog is full.
    public func store(forKey key: String, holding bytes: Int, making entry: @escaping @Sendable () -> (Data, DiskCacheMetadata)?) {
        guard
            let (ticket, epoch) = lock.withLock({ () -> (Int, Int)? in
                guard reserveLocked(bytes) else { return nil }
                nextTicket += 1
                return (nextTicket, self.epoch)
            })
        else { return onDrop() }
        writes.async { [self] in
            defer { lock.withLock { pendingBytes -= bytes } }
            guard isCurrent(epoch), let (data, metadata) = entry() else { return }
            // A removal queued meanwhile wins: it came later.
            guard lock.withLock({ pending[key].map { $0.ticket < ticket } ?? true }) else { return }
            perform { (disk) throws(DiskCacheError) in try disk.setValue(data, forKey: key, metadata: metadata) }
        }
    }

    /// Bytes the queued writes hold now.
    public var pendingWriteBytes: Int { lock.withLock { pendingBytes } }

    /// Queues removing `key`; from now on `entry(forKey:)` misses it.
    public func remove(forKey key: String) {
        enqueue(key, visible: nil, holding: 0) { (disk) throws(DiskCacheError) in try disk.removeValue(forKey: key) }
    }

    /// Drops every queued write and empties the disk cache, after whatever write is running.
    public func removeAll() throws(DiskCacheError) {
        lock.withLock {
            epoch += 1
            pending.removeAll()
        }
        let result = writes.sync { [disk] in Result { () throws(DiskCacheError) in try disk.removeAll() } }
        try result.get()
    }

    /// Waits until everything queued so far is written (for tests and benchmarks that look at
    /// the disk right after a store, and for a clean shutdown).
    public func flush() async {
        await withCheckedContinuation { continuation in writes.async { continuation.resume() } }
    }

    private func enqueue(
        _ key: String, visible entry: DiskCacheEntry?, holding bytes: Int,
        _ operation: @escaping @Sendable (DiskCache) throws(DiskCacheError) -> Void
    ) {
        guard
            let (ticket, epoch) = lock.withLock({ () -> (Int, Int)? in
                // A removal (0 bytes) always fits: dropping one could leave a bad entry in place.
                guard reserveLocked(bytes) else { return nil }
                nextTicket += 1
                pending[key] = (nextTicket, entry)
                return (nextTicket, self.epoch)
            })
        else { return onDrop() }
        writes.async { [self] in
            if isCurrent(epoch) { perform(operation) }
            lock.withLock {
                pendingBytes -= bytes
                if pending[key]?.ticket == ticket { pending[key] = nil }
            }
        }
    }

    /// Counts `bytes` into the backlog if they fit (call with `lock` held).
    private func reserveLocked(_ bytes: Int) -> Bool {
        // Alone, a store larger than the whole backlog still fits: the body limit bounds it.
        guard bytes == 0 || pendingBytes == 0 || pendingBytes + bytes <= maximumPendingBytes else { return false }
        pendingBytes += bytes
        return true
    }

    private func isCurrent(_ epoch: Int) -> Bool { lock.withLock { self.epoch == epoch } }

    private func perform(_ operation: (DiskCache) throws(DiskCacheError) -> Void) {
        do {
            try operation(disk)
        } catch {
            onError()
        }
    }
}
