import Dispatch
import Foundation
import ImageCache
import Locking

/// The pipeline's disk I/O, kept off the cooperative thread pool (a 64 MB read or an fsync'd
/// write there would stall every continuation on a 2-core phone): reads run on a concurrent
/// dispatch queue of their own, writes and removals in order on a serial one, queued after the
/// result they follow has been delivered. What waits to be written is served from memory
/// meanwhile, so a request right after a download does not miss the disk and download again;
/// a queued removal hides the entry at once.
final class DiskWork: @unchecked Sendable {
    // @unchecked: `pending` and `epoch` are only touched while `lock` is held.
    let disk: DiskCache
    private let reads = DispatchQueue(label: "ImagePipeline.disk-reads", qos: .userInitiated, attributes: .concurrent)
    private let writes = DispatchQueue(label: "ImagePipeline.disk-writes", qos: .utility)
    private let lock = Lock()
    /// The latest queued write (an entry) or removal (nil) per key, and its ticket.
    private var pending: [String: (ticket: Int, entry: DiskCacheEntry?)] = [:]
    private var nextTicket = 0
    /// Bumped by `removeAll`: writes queued before it are dropped.
    private var epoch = 0
    private let onError: @Sendable () -> Void

    init(disk: DiskCache, onError: @escaping @Sendable () -> Void) {
        self.disk = disk
        self.onError = onError
    }

    /// The entry for `key`, stale or not: a queued write's, else the disk's (read on the
    /// pipeline's own threads); a disk that cannot be read is a miss.
    func entry(forKey key: String) async -> DiskCacheEntry? {
        if let queued = lock.withLock({ pending[key] }) { return queued.entry }
        return await withCheckedContinuation { continuation in
            reads.async { [disk, onError] in
                do {
                    continuation.resume(returning: try disk.entry(forKey: key, allowingExpired: true))
                } catch {
                    onError()
                    continuation.resume(returning: nil)
                }
            }
        }
    }

    /// Queues storing `data` under `key`; until it is written, `entry(forKey:)` returns it.
    func store(_ data: Data, metadata: DiskCacheMetadata, forKey key: String) {
        enqueue(key, visible: DiskCacheEntry(key: key, data: data, metadata: metadata)) { (disk) throws(DiskCacheError) in
            try disk.setValue(data, forKey: key, metadata: metadata)
        }
    }

    /// Queues making an entry (encoding a thumbnail, say) and storing it: the work runs on the
    /// write queue, and the entry is not visible before it is written.
    func store(forKey key: String, making entry: @escaping @Sendable () -> (Data, DiskCacheMetadata)?) {
        let (ticket, epoch) = lock.withLock { () -> (Int, Int) in
            nextTicket += 1
            return (nextTicket, self.epoch)
        }
        writes.async { [self] in
            guard isCurrent(epoch), let (data, metadata) = entry() else { return }
            // A removal queued meanwhile wins: it came later.
            guard lock.withLock({ pending[key].map { $0.ticket < ticket } ?? true }) else { return }
            perform { (disk) throws(DiskCacheError) in try disk.setValue(data, forKey: key, metadata: metadata) }
        }
    }

    /// Queues removing `key`; from now on `entry(forKey:)` misses it.
    func remove(forKey key: String) {
        enqueue(key, visible: nil) { (disk) throws(DiskCacheError) in try disk.removeValue(forKey: key) }
    }

    /// Drops every queued write and empties the disk cache, after whatever write is running.
    func removeAll() throws(DiskCacheError) {
        lock.withLock {
            epoch += 1
            pending.removeAll()
        }
        let result = writes.sync { [disk] in Result { () throws(DiskCacheError) in try disk.removeAll() } }
        try result.get()
    }

    /// Waits until everything queued so far is written (for tests and benchmarks that look at
    /// the disk right after a load).
    func flush() async {
        await withCheckedContinuation { continuation in writes.async { continuation.resume() } }
    }

    private func enqueue(_ key: String, visible entry: DiskCacheEntry?, _ operation: @escaping @Sendable (DiskCache) throws(DiskCacheError) -> Void) {
        let (ticket, epoch) = lock.withLock { () -> (Int, Int) in
            nextTicket += 1
            pending[key] = (nextTicket, entry)
            return (nextTicket, self.epoch)
        }
        writes.async { [self] in
            if isCurrent(epoch) { perform(operation) }
            lock.withLock { if pending[key]?.ticket == ticket { pending[key] = nil } }
        }
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
