import Foundation

/// A size-bounded, crash-safe key → bytes cache in one directory.
///
/// - Entries are files named by the SHA-256 of their key, each with a checksum: a torn or
///   bit-rotted file reads as a miss and is removed, never returned.
/// - Writes go to `tmp/` and are renamed into `entries/`, so an entry is either absent or
///   complete, whenever the process dies.
/// - An append-only journal keeps least-recently-used order, so opening does not stat every
///   file; opening replays it, removes interrupted writes and orphans, and compacts it.
/// - The size limit holds after every write, not only at launch.
/// - One process at a time: a second one gets `DiskCacheError.locked` (an `flock`).
///
/// Reads do their file I/O outside the lock, so a read never waits for another entry's write.
public final class DiskCache: @unchecked Sendable {
    // @unchecked: the mutable state below is only touched while `lock` is held.
    public let directory: String
    public let configuration: DiskCacheConfiguration
    private let fileSystem: any CacheFileSystem
    private let clock: any CacheClock
    private let lock = Lock()
    private let directoryLock: any AnyObject & Sendable
    /// Entry file name → size (as the cost), in least-recently-used order.
    private var index = LRUList<String, Void>()
    private var journal: any AppendingFile
    private var journalRecordCount = 0
    private var pendingReads: [String] = []
    private var hits = 0
    private var misses = 0
    private var corruptEntriesRemoved = 0
    /// What opening repaired, so `verify()` can report it: a killed writer's leftovers are
    /// cleaned by the next open, which is usually the `verify` run itself.
    private var repairsAtOpen: DiskCacheVerificationReport?

    private var entriesDirectory: String { directory + "/entries" }
    private var temporaryDirectory: String { directory + "/tmp" }
    private var journalPath: String { directory + "/journal" }

    /// Opens (creating if needed) the cache in `directory`, repairing what a crash left.
    public init(directory: String, configuration: DiskCacheConfiguration = DiskCacheConfiguration(),
                fileSystem: any CacheFileSystem = POSIXFileSystem(), clock: any CacheClock = SystemClock()) throws(DiskCacheError) {
        self.directory = directory
        self.configuration = configuration
        self.fileSystem = fileSystem
        self.clock = clock
        (directoryLock, journal) = try Self.open(directory, fileSystem: fileSystem)
        try lock.withLock { () throws(DiskCacheError) in try rebuild() }
    }

    deinit {
        try? flushPendingReads()
    }

    /// Creates the layout and takes the process lock.
    private static func open(_ directory: String, fileSystem: any CacheFileSystem)
        throws(DiskCacheError) -> (any AnyObject & Sendable, any AppendingFile) {
        do throws(FileSystemError) {
            try fileSystem.createDirectory(at: directory)
        } catch {
            throw .io(error)
        }
        let directoryLock: any AnyObject & Sendable
        do throws(FileSystemError) {
            directoryLock = try fileSystem.lockExclusively(directory + "/lock")
        } catch {
            throw error.code == EWOULDBLOCK || error.code == EAGAIN ? .locked(directory: directory) : .io(error)
        }
        do throws(FileSystemError) {
            try fileSystem.createDirectory(at: directory + "/entries")
            try fileSystem.createDirectory(at: directory + "/tmp")
            return (directoryLock, try fileSystem.openForAppending(directory + "/journal"))
        } catch {
            throw .io(error)
        }
    }

    // MARK: - Public operations

    /// Stores `data` under `key`, replacing any previous entry, then evicts least recently used
    /// entries until the size limit holds.
    public func store(_ data: Data, forKey key: String, metadata: DiskCacheMetadata = DiskCacheMetadata()) throws(DiskCacheError) {
        let name = DiskCacheKey.fileName(for: key)
        let file = EntryFile.encode(key: key, metadata: metadata, data: data)
        guard file.count <= configuration.sizeLimit else {
            throw .entryTooLarge(key: key, size: file.count, limit: configuration.sizeLimit)
        }
        do {
            try write(file, name: name)
        } catch let error where error.code == ENOENT {
            // The directory was removed underneath us: recreate it and try once more.
            try lock.withLock { () throws(DiskCacheError) in try rebuild() }
            do { try write(file, name: name) } catch { throw .io(error) }
        } catch {
            throw .io(error)
        }
    }

    /// The entry for `key`, or nil on a miss. Damaged entries are removed and reported as
    /// misses; expired ones too, unless `allowingExpired` (for HTTP revalidation).
    public func entry(forKey key: String, allowingExpired: Bool = false) throws(DiskCacheError) -> DiskCacheEntry? {
        let name = DiskCacheKey.fileName(for: key)
        let known = lock.withLock {
            guard index.touch(name) != nil else {
                misses += 1
                return false
            }
            pendingReads.append(name)
            return true
        }
        guard known else { return nil }
        let file: Data
        do {
            file = try fileSystem.readFile(at: entryPath(name))
        } catch where error.code == ENOENT {
            try discard(name, corrupt: false)
            return nil
        } catch {
            throw .io(error)
        }
        guard let entry = EntryFile.decode(file), entry.key == key else {
            try discard(name, corrupt: true)
            return nil
        }
        if !allowingExpired, let expires = entry.metadata.expires, expires <= clock.now {
            try discard(name, corrupt: false)
            return nil
        }
        lock.withLock {
            hits += 1
            if pendingReads.count >= 64 { try? flushPendingReads() }
        }
        return entry
    }

    /// The bytes stored under `key`, or nil.
    public func data(forKey key: String) throws(DiskCacheError) -> Data? {
        try entry(forKey: key)?.data
    }

    /// Removes the entry for `key` (file and index), if any.
    public func removeEntry(forKey key: String) throws(DiskCacheError) {
        try lock.withLock { () throws(DiskCacheError) in
            try removeLocked(DiskCacheKey.fileName(for: key))
        }
    }

    /// Removes every entry.
    public func removeAll() throws(DiskCacheError) {
        try lock.withLock { () throws(DiskCacheError) in
            do throws(FileSystemError) {
                for name in try fileSystem.contentsOfDirectory(at: entriesDirectory) {
                    try fileSystem.removeFile(at: entryPath(name))
                }
            } catch {
                throw .io(error)
            }
            index.removeAll()
            pendingReads.removeAll()
            try rewriteJournal()
        }
    }

    /// Count, total bytes, limit, and hit/miss/corruption counters since opening.
    public var statistics: DiskCacheStatistics {
        lock.withLock {
            DiskCacheStatistics(count: index.count, totalBytes: index.totalCost, sizeLimit: configuration.sizeLimit,
                                hits: hits, misses: misses, corruptEntriesRemoved: corruptEntriesRemoved)
        }
    }

    /// Reads and checks every entry, removes damaged ones and files no entry owns.
    public func verify() throws(DiskCacheError) -> DiskCacheVerificationReport {
        try lock.withLock { () throws(DiskCacheError) -> DiskCacheVerificationReport in
            var report = try repairDirectory()
            if let earlier = repairsAtOpen {
                report.orphans = earlier.orphans + report.orphans
                report.missing = earlier.missing + report.missing
                repairsAtOpen = nil
            }
            for (name, _) in index.entriesFromLeastRecent {
                let file: Data
                do throws(FileSystemError) { file = try fileSystem.readFile(at: entryPath(name)) } catch { throw .io(error) }
                if let entry = EntryFile.decode(file), DiskCacheKey.fileName(for: entry.key) == name {
                    report.valid += 1
                } else {
                    report.corrupt.append(name)
                    corruptEntriesRemoved += 1
                    try removeLocked(name)
                }
            }
            try rewriteJournal()
            report.count = index.count
            report.totalBytes = index.totalCost
            return report
        }
    }

    // MARK: - Writing

    /// DIRTY, write to tmp/, rename into entries/, CLEAN, evict. Throws the raw error so
    /// `store` can recognise a removed directory.
    private func write(_ file: Data, name: String) throws(FileSystemError) {
        let temporary = temporaryDirectory + "/" + name + "." + UUID().uuidString
        try lock.withLock { () throws(FileSystemError) in try append([.dirty(name)]) }
        do {
            try fileSystem.writeFile(file, to: temporary, synchronize: configuration.synchronizesWrites)
            try lock.withLock { () throws(FileSystemError) in
                try fileSystem.moveItem(from: temporary, to: entryPath(name))
                index.insert(name, value: (), cost: file.count, expiry: nil)
                var records = pendingReads.map(JournalRecord.read)
                pendingReads.removeAll()
                records.append(.clean(name, size: file.count))
                while index.totalCost > configuration.sizeLimit, let victim = index.removeLeastRecent() {
                    try fileSystem.removeFile(at: entryPath(victim.key))
                    records.append(.remove(victim.key))
                }
                try append(records)
                try compactIfNeeded()
            }
        } catch {
            try? fileSystem.removeFile(at: temporary)
            // Close the DIRTY record so the next open does not have to examine this entry.
            lock.withLock {
                let closing: JournalRecord = index.touch(name).map { .clean(name, size: $0.cost) } ?? .remove(name)
                try? append([closing])
            }
            throw error
        }
    }

    // MARK: - Locked helpers (call with `lock` held)

    private func entryPath(_ name: String) -> String { entriesDirectory + "/" + name }

    private func append(_ records: [JournalRecord]) throws(FileSystemError) {
        guard !records.isEmpty else { return }
        try journal.append(Journal.encode(records))
        journalRecordCount += records.count
    }

    private func flushPendingReads() throws(FileSystemError) {
        let records = pendingReads.map(JournalRecord.read)
        pendingReads.removeAll()
        try append(records)
    }

    private func removeLocked(_ name: String) throws(DiskCacheError) {
        guard index.remove(name) != nil else { return }
        do {
            try fileSystem.removeFile(at: entryPath(name))
            try append([.remove(name)])
        } catch {
            throw .io(error)
        }
    }

    private func discard(_ name: String, corrupt: Bool) throws(DiskCacheError) {
        try lock.withLock { () throws(DiskCacheError) in
            misses += 1
            if corrupt { corruptEntriesRemoved += 1 }
            try removeLocked(name)
        }
    }

    /// The journal grows by a record per write and read; rewrite it once it holds far more
    /// records than there are entries.
    private func compactIfNeeded() throws(FileSystemError) {
        if journalRecordCount > 2 * index.count + 2000 { try rewriteJournalRaw() }
    }

    private func rewriteJournal() throws(DiskCacheError) {
        do { try rewriteJournalRaw() } catch { throw .io(error) }
    }

    /// Writes the index as CLEAN records, oldest first, to a new file renamed over the journal.
    private func rewriteJournalRaw() throws(FileSystemError) {
        let records = index.entriesFromLeastRecent.map { JournalRecord.clean($0.key, size: $0.cost) }
        let temporary = journalPath + ".tmp"
        try fileSystem.writeFile(Data(Journal.header.utf8) + Journal.encode(records), to: temporary,
                                 synchronize: configuration.synchronizesWrites)
        try fileSystem.moveItem(from: temporary, to: journalPath)
        journal = try fileSystem.openForAppending(journalPath)
        journalRecordCount = records.count
        pendingReads.removeAll()
    }

    /// Replays the journal, reconciles it with the directory, compacts, and applies the limit.
    private func rebuild() throws(DiskCacheError) {
        do {
            try fileSystem.createDirectory(at: entriesDirectory)
            try fileSystem.createDirectory(at: temporaryDirectory)
            let data: Data
            do { data = try fileSystem.readFile(at: journalPath) } catch where error.code == ENOENT { data = Data() }
            index.removeAll()
            var interrupted = Set<String>()
            for record in Journal.parse(data) ?? [] {
                switch record {
                case .dirty(let name): interrupted.insert(name)
                case .clean(let name, let size):
                    interrupted.remove(name)
                    index.insert(name, value: (), cost: size, expiry: nil)
                case .read(let name): _ = index.touch(name)
                case .remove(let name):
                    interrupted.remove(name)
                    index.remove(name)
                }
            }
            // An interrupted write left the old file, the new file or none (rename is atomic);
            // any file there is complete and checksummed, so keep it with its real size.
            for name in interrupted {
                if let size = try fileSystem.fileSize(at: entryPath(name)) {
                    index.insert(name, value: (), cost: size, expiry: nil)
                } else {
                    index.remove(name)
                }
            }
        } catch {
            throw .io(error)
        }
        repairsAtOpen = try repairDirectory()
        do {
            while index.totalCost > configuration.sizeLimit, let victim = index.removeLeastRecent() {
                try fileSystem.removeFile(at: entryPath(victim.key))
            }
        } catch {
            throw .io(error)
        }
        try rewriteJournal()
    }

    /// Deletes temporary files and entry files no index entry owns; drops index entries whose
    /// file is gone. Reports what it found; `checked` is the number of entries left.
    private func repairDirectory() throws(DiskCacheError) -> DiskCacheVerificationReport {
        var report = DiskCacheVerificationReport(checked: 0, valid: 0, corrupt: [], orphans: [], missing: [], count: 0, totalBytes: 0)
        do {
            for name in try fileSystem.contentsOfDirectory(at: temporaryDirectory) {
                try fileSystem.removeFile(at: temporaryDirectory + "/" + name)
                report.orphans.append("tmp/" + name)
            }
            let present = Set(try fileSystem.contentsOfDirectory(at: entriesDirectory))
            var owned = Set<String>()
            for (name, _) in index.entriesFromLeastRecent {
                if present.contains(name) {
                    owned.insert(name)
                } else {
                    index.remove(name)
                    report.missing.append(name)
                }
            }
            for name in present.subtracting(owned).sorted() {
                try fileSystem.removeFile(at: entryPath(name))
                report.orphans.append("entries/" + name)
            }
        } catch {
            throw .io(error)
        }
        report.checked = index.count
        return report
    }
}
