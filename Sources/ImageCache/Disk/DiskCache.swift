import Foundation
import Locking

/// A size-bounded, crash-safe key → bytes cache in one directory.
///
/// - Entries are files named by the SHA-256 of their key, each with a checksum: a torn,
///   bit-rotted or tampered file reads as a miss and is removed, never returned.
/// - Writes go to `tmp/` and are renamed into `entries/`, so an entry is either absent or
///   complete, whenever the process dies.
/// - An append-only journal keeps the least-recently-used order; opening replays it, takes
///   sizes from the file system, keeps every intact entry file (a damaged journal loses the
///   order, never the entries), removes what a killed writer left, and compacts the journal.
/// - The size limit belongs to the directory (it is recorded in the journal) and holds after
///   every write. Opening never evicts unless the configuration sets a new limit.
/// - Nothing outside the directory is ever read, written or deleted: names are resolved
///   relative to open directories without following links, and anything that is not a regular
///   file where an entry should be is removed as junk.
/// - One process at a time: a second one gets `DiskCacheError.locked` (an `flock`).
/// - A full disk or read-only file system at open leaves a cache that reads but refuses writes
///   (`DiskCacheError.readOnly`), and retries writing on each store.
///
/// Reads do their file I/O outside the lock, so a read never waits for another entry's write.
///
/// ```swift
/// let disk = try DiskCache(directory: cachesURL.appendingPathComponent("images"))
/// try disk.setValue(body, forKey: url.absoluteString, metadata: DiskCacheMetadata(etag: etag))
/// let cached = try disk.value(forKey: url.absoluteString)   // nil on a miss or a damaged entry
/// ```
public final class DiskCache: @unchecked Sendable {
    // @unchecked: the mutable state below is only touched while `lock` is held.
    /// The cache directory.
    public let directory: URL
    /// The configuration the cache was opened with.
    public let configuration: DiskCacheConfiguration
    let fileSystem: any CacheFileSystem
    let clock: any CacheClock
    let lock = Lock()

    var layout: DiskCacheLayout
    /// Bumped each time the layout is reopened, so concurrent writers that all saw the
    /// directory vanish reopen it once.
    var layoutGeneration = 0
    var journal: (any AppendingFile)?
    var journalRecordCount = 0
    /// Entry file name → version; the cost is the file's size. Versions let a reader that found
    /// a damaged or expired file remove exactly that version, never a newer one stored meanwhile.
    var index = LRUList<String, UInt64>()
    var nextVersion: UInt64 = 1
    /// Names with a DIRTY record and no CLEAN/REMOVE yet, and their temporary files: a journal
    /// rewrite re-emits the DIRTY records, and `verify` leaves the temporary files alone.
    var writesInFlight: [String: Int] = [:]
    var temporariesInFlight = Set<String>()
    var temporaryCounter = 0
    var pendingReads: [String] = []
    var sizeLimit: Int
    var readOnlyReason: FileSystemError?
    var counters = DiskCacheStatistics.Counters()
    /// What opening repaired, so `verify()` can report it: a killed writer's leftovers are
    /// cleaned by the next open, which is usually the `verify` run itself.
    var repairsAtOpen: DiskCacheVerificationReport?

    /// Opens (creating if needed) the cache in `directory`, repairing what a crash left.
    ///
    /// With `configuration.sizeLimit` set, that limit is recorded in the directory and applied
    /// at once (least recently used entries are evicted); with nil, the directory's recorded
    /// limit applies and nothing is evicted.
    public init(
        directory: URL, configuration: DiskCacheConfiguration = DiskCacheConfiguration(),
        fileSystem: any CacheFileSystem = POSIXFileSystem(), clock: any CacheClock = SystemClock()
    ) throws(DiskCacheError) {
        self.directory = directory
        self.configuration = configuration
        self.fileSystem = fileSystem
        self.clock = clock
        layout = try DiskCacheLayout.open(directory, fileSystem: fileSystem)
        sizeLimit = configuration.sizeLimit ?? DiskCacheConfiguration.defaultSizeLimit
        try lock.withLock { () throws(DiskCacheError) in
            let recovered = try recover()
            repairsAtOpen = recovered.report
            sizeLimit = configuration.sizeLimit ?? recovered.recordedLimit ?? DiskCacheConfiguration.defaultSizeLimit
            if configuration.sizeLimit != nil {
                _ = evictLocked()
            }
            openJournalAfterRecovery(recordedJournalIsValid: recovered.journalWasValid)
        }
    }

    deinit {
        lock.withLock { try? flushPendingReads() }
    }

    // MARK: - Public operations

    /// Stores `data` under `key`, replacing any previous entry, then evicts least recently used
    /// entries until the size limit holds. When this returns, a process crash cannot lose the
    /// entry; with `synchronizesWrites`, a power loss cannot either.
    public func setValue(_ data: Data, forKey key: String, metadata: DiskCacheMetadata = DiskCacheMetadata()) throws(DiskCacheError) {
        let name = DiskCacheKey.fileName(for: key)
        let file = EntryFile.encode(key: key, metadata: metadata, data: data)
        let size = file.reduce(0) { $0 + $1.count }
        let generation: Int = try lock.withLock { () throws(DiskCacheError) in
            guard size <= sizeLimit else {
                throw .entryTooLarge(key: key, size: size, limit: sizeLimit)
            }
            try ensureWritable()
            return layoutGeneration
        }
        do {
            try write(file, name: name)
        } catch let error where error.code == ENOENT {
            // The directory was removed underneath us: reopen it (once for all writers that saw
            // it go) and try once more.
            try lock.withLock { () throws(DiskCacheError) in
                if layoutGeneration == generation { try reopenLocked() }
            }
            do { try write(file, name: name) } catch { throw .io(error) }
        } catch {
            throw .io(error)
        }
    }

    /// The entry for `key`, or nil on a miss. Damaged entries are removed and reported as
    /// misses; expired ones too, unless `allowingExpired` (for HTTP revalidation). The file is
    /// read into one buffer from `memory`, and the entry's bytes are that buffer: throws
    /// ``DiskCacheError/noMemory(bytes:)`` when `memory` has no room for it (nothing read).
    public func entry(
        forKey key: String, allowingExpired: Bool = false, memory: any ReadMemory = PlainReadMemory()
    ) throws(DiskCacheError) -> DiskCacheEntry? {
        let name = DiskCacheKey.fileName(for: key)
        let (version, entries, limit) = lock.withLock { () -> (UInt64?, any CacheDirectory, Int) in
            guard let found = index.touch(name) else {
                counters.misses += 1
                return (nil, layout.entries, 0)
            }
            pendingReads.append(name)
            // A file larger than both its recorded size and the limit cannot be an entry (the
            // limit may have shrunk below an older entry's size).
            return (found.value, layout.entries, max(found.cost, sizeLimit))
        }
        guard let version else { return nil }
        var file: Data
        do {
            file = try entries.readFile(name, maximumSize: limit, memory: memory)
        } catch  where error.code == ENOMEM {
            lock.withLock { counters.misses += 1 }
            throw .noMemory(bytes: (try? entries.status(of: name))??.size ?? 0)
        } catch  where error.code == ENOENT {
            discard(name, version: version, corrupt: false)
            return nil
        } catch  where error.code == FileSystemError.notRegularFile || error.code == EFBIG {
            discard(name, version: version, corrupt: true)
            return nil
        } catch {
            throw .io(error)
        }
        guard let entry = EntryFile.decode(&file), entry.key == key else {
            discard(name, version: version, corrupt: true)
            return nil
        }
        if !allowingExpired, let expires = entry.metadata.expires, expires <= clock.now {
            discard(name, version: version, corrupt: false)
            return nil
        }
        lock.withLock {
            counters.hits += 1
            if pendingReads.count >= 64 { try? flushPendingReads() }
        }
        return entry
    }

    /// The size of `key`'s entry file (its bytes and metadata) as the index records it, without
    /// reading anything or counting a hit; nil when there is none. A caller that must reserve
    /// memory before a read (the thumbnail service) reserves this much, an upper bound of the
    /// bytes a read returns.
    public func storedSize(forKey key: String) -> Int? {
        let name = DiskCacheKey.fileName(for: key)
        return lock.withLock { index.peek(name)?.cost }
    }

    /// The bytes stored under `key`, or nil on a miss (or an expired or damaged entry).
    public func value(forKey key: String) throws(DiskCacheError) -> Data? {
        try entry(forKey: key)?.data
    }

    /// Removes the entry for `key` (file and index), if any.
    public func removeValue(forKey key: String) throws(DiskCacheError) {
        try lock.withLock { () throws(DiskCacheError) in
            let name = DiskCacheKey.fileName(for: key)
            guard let found = index.peek(name) else { return }
            try ensureWritable()
            do throws(FileSystemError) { try removeLocked(name, version: found.value) } catch { throw .io(error) }
        }
    }

    /// Removes every entry.
    public func removeAll() throws(DiskCacheError) {
        try lock.withLock { () throws(DiskCacheError) in
            try ensureWritable()
            do throws(FileSystemError) {
                for item in try layout.entries.list() { try layout.entries.remove(item.name) }
            } catch {
                throw .io(error)
            }
            index.removeAll()
            pendingReads.removeAll()
            do throws(FileSystemError) { try rewriteJournal() } catch { throw .io(error) }
        }
    }

    /// The name of the file in `entries/` that holds the entry for `key`: the SHA-256 of the key
    /// in lowercase hex. Keys never become paths.
    public static func entryFileName(forKey key: String) -> String {
        DiskCacheKey.fileName(for: key)
    }

    /// Bytes an entry for `data` under `key` takes on disk: what counts against the size limit.
    public static func storedSize(of data: Data, forKey key: String, metadata: DiskCacheMetadata = DiskCacheMetadata()) -> Int {
        EntryFile.size(keyBytes: key.utf8.count, metadata: metadata, dataBytes: data.count)
    }

    /// The directory's size limit in bytes.
    public var currentSizeLimit: Int {
        lock.withLock { sizeLimit }
    }

    /// Sets the directory's size limit (recorded in the journal, so later opens keep it) and
    /// evicts least recently used entries until it holds.
    public func setSizeLimit(_ limit: Int) throws(DiskCacheError) {
        guard limit > 0 else { throw .invalidSizeLimit(limit) }
        try lock.withLock { () throws(DiskCacheError) in
            try ensureWritable()
            sizeLimit = limit
            var records = evictLocked()
            records.append(.limit(limit))
            do throws(FileSystemError) { try append(records) } catch { throw .io(error) }
        }
    }

    /// Count, total bytes, limit, and hit/miss/corruption counters since opening.
    public var statistics: DiskCacheStatistics {
        lock.withLock {
            DiskCacheStatistics(
                count: index.count, totalBytes: index.totalCost, sizeLimit: sizeLimit,
                counters: counters, isReadOnly: readOnlyReason != nil)
        }
    }

    // MARK: - Writing

    /// DIRTY, write to tmp/, rename into entries/, CLEAN, evict. Throws the raw error so
    /// `setValue` can recognise a removed directory.
    private func write(_ file: [Data], name: String) throws(FileSystemError) {
        let size = file.reduce(0) { $0 + $1.count }
        let (temporaryName, temporary) = try lock.withLock { () throws(FileSystemError) in
            try append([.dirty(name)])
            writesInFlight[name, default: 0] += 1
            temporaryCounter += 1
            let temporaryName = "\(name).\(getpid()).\(temporaryCounter)"
            temporariesInFlight.insert(temporaryName)
            return (temporaryName, layout.temporary)
        }
        // Whether the write's bookkeeping has been closed: once, whatever fails after the rename
        // (closing it twice would take another in-flight write of the same entry off the books).
        var finished = false
        do {
            try createTemporary(temporaryName, in: temporary, contents: file)
            try lock.withLock { () throws(FileSystemError) in
                // Room first, then the rename: the entries never exceed the limit, even for an
                // instant a crash could freeze.
                let replaced = index.peek(name)?.cost ?? 0
                let evicted = evictLocked(reserving: size - replaced, keeping: name)
                try append(pendingReads.map(JournalRecord.read) + evicted)
                pendingReads.removeAll()
                try moveIntoPlace(temporaryName, from: temporary, as: name)
                finishWrite(name, temporaryName)
                finished = true
                index.insert(name, value: nextVersion, cost: size, expiry: nil)
                nextVersion += 1
                try append([.clean(name, size: size)])
                if configuration.synchronizesWrites { try journal?.synchronize() }
                try compactIfNeeded()
            }
        } catch {
            try? temporary.remove(temporaryName)
            lock.withLock {
                if !finished { finishWrite(name, temporaryName) }
                // Close the DIRTY record without changing the order: the entry in place (old or
                // new, whichever the rename left) stays where it was in the LRU order.
                let closing: JournalRecord = index.peek(name).map { .clean(name, size: $0.cost) } ?? .remove(name)
                try? append([closing])
            }
            throw error
        }
    }

    /// Creates the temporary file; a name already taken (a leftover, or something planted) is
    /// removed and the creation retried once.
    private func createTemporary(_ name: String, in directory: any CacheDirectory, contents: [Data]) throws(FileSystemError) {
        do {
            try directory.createFile(name, contents: contents, synchronize: configuration.synchronizesWrites)
        } catch  where error.code == EEXIST {
            try directory.remove(name)
            try directory.createFile(name, contents: contents, synchronize: configuration.synchronizesWrites)
        }
    }

    /// Renames into entries/; a directory squatting the entry's name is removed first.
    private func moveIntoPlace(_ temporaryName: String, from temporary: any CacheDirectory, as name: String) throws(FileSystemError) {
        do {
            try temporary.move(temporaryName, to: layout.entries, as: name)
        } catch  where [EISDIR, ENOTEMPTY, EEXIST, ENOTDIR].contains(error.code) {
            try layout.entries.remove(name)
            try temporary.move(temporaryName, to: layout.entries, as: name)
        }
        if configuration.synchronizesWrites { try layout.entries.synchronize() }
    }

    private func finishWrite(_ name: String, _ temporaryName: String) {
        temporariesInFlight.remove(temporaryName)
        if let count = writesInFlight[name], count > 1 { writesInFlight[name] = count - 1 } else { writesInFlight[name] = nil }
    }

    // MARK: - Locked helpers (call with `lock` held)

    /// Throws `readOnly` unless the cache can write; a cache that opened read-only retries
    /// first, so a disk that was full at launch is used again once it has room.
    func ensureWritable() throws(DiskCacheError) {
        guard let reason = readOnlyReason else { return }
        guard layout.directoryLock != nil else { throw .readOnly(reason) }
        do {
            try rewriteJournal()
            readOnlyReason = nil
        } catch {
            throw .readOnly(error)
        }
    }

    func append(_ records: [JournalRecord]) throws(FileSystemError) {
        guard !records.isEmpty else { return }
        guard let journal else {
            throw readOnlyReason ?? FileSystemError(operation: "append", path: layout.root.path + "/" + Journal.fileName, code: EBADF)
        }
        try journal.append(Journal.encode(records))
        journalRecordCount += records.count
    }

    func flushPendingReads() throws(FileSystemError) {
        let records = pendingReads.map(JournalRecord.read)
        pendingReads.removeAll()
        if journal != nil { try append(records) }
    }

    func removeLocked(_ name: String, version: UInt64) throws(FileSystemError) {
        guard index.peek(name)?.value == version else { return }
        try layout.entries.remove(name)
        index.remove(name)
        try append([.remove(name)])
    }

    /// Removes the entry `name` if it is still `version`; failures only leave it for the next
    /// read or `verify` to deal with.
    private func discard(_ name: String, version: UInt64, corrupt: Bool) {
        lock.withLock {
            counters.misses += 1
            guard index.peek(name)?.value == version else { return }
            if corrupt { counters.corruptEntriesRemoved += 1 }
            if readOnlyReason != nil {
                index.remove(name)
                return
            }
            try? removeLocked(name, version: version)
        }
    }

    /// Evicts least recently used entries until the size limit holds with `reserving` more bytes
    /// (never evicting `keeping`), and returns their REMOVE records. An entry whose file cannot
    /// be removed stays counted (the accounting must match the disk) and is skipped; the next
    /// eviction tries it again.
    func evictLocked(reserving: Int = 0, keeping: String? = nil) -> [JournalRecord] {
        var records: [JournalRecord] = []
        var undeletable: Set<String> = keeping.map { [$0] } ?? []
        while index.totalCost + reserving > sizeLimit, let victim = index.leastRecent(skipping: undeletable) {
            do {
                try layout.entries.remove(victim.key)
                index.remove(victim.key)
                records.append(.remove(victim.key))
                counters.evictions += 1
            } catch {
                undeletable.insert(victim.key)
                counters.failedEvictions += 1
            }
        }
        return records
    }

    /// The journal grows by a record per write and read; rewrite it once it holds far more
    /// records than there are entries.
    private func compactIfNeeded() throws(FileSystemError) {
        if journalRecordCount > 2 * index.count + 2000 { try rewriteJournal() }
    }

    /// Writes the limit, the index as CLEAN records (oldest first) and a DIRTY record for each
    /// write in flight to a new file, renamed over the journal.
    func rewriteJournal() throws(FileSystemError) {
        var records: [JournalRecord] = [.limit(sizeLimit)]
        records += index.entriesFromLeastRecent.map { JournalRecord.clean($0.key, size: $0.cost) }
        records += writesInFlight.keys.sorted().map(JournalRecord.dirty)
        let contents = Data(Journal.header.utf8) + Journal.encode(records)
        let root = layout.root
        do {
            do {
                try root.createFile(Journal.temporaryFileName, contents: [contents], synchronize: configuration.synchronizesWrites)
            } catch  where error.code == EEXIST {
                // Left by a killed rewrite, or planted (a link to elsewhere): remove the name only.
                try root.remove(Journal.temporaryFileName)
                try root.createFile(Journal.temporaryFileName, contents: [contents], synchronize: configuration.synchronizesWrites)
            }
            try root.move(Journal.temporaryFileName, to: root, as: Journal.fileName)
            if configuration.synchronizesWrites { try root.synchronize() }
        } catch {
            try? root.remove(Journal.temporaryFileName)
            throw error
        }
        journal = try root.openForAppending(Journal.fileName)
        journalRecordCount = records.count
        pendingReads.removeAll()
    }

    /// After the directory was removed underneath: recreate it, take the process lock on the
    /// new lock file (the old one was deleted with the directory), and start from what is there.
    private func reopenLocked() throws(DiskCacheError) {
        journal = nil
        layout = try DiskCacheLayout.open(directory, fileSystem: fileSystem)
        layoutGeneration += 1
        let recovered = try recover()
        openJournalAfterRecovery(recordedJournalIsValid: recovered.journalWasValid)
        if let reason = readOnlyReason { throw .readOnly(reason) }
    }
}
