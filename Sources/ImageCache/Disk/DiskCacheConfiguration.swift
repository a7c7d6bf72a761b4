/// Limit and durability of a `DiskCache`.
public struct DiskCacheConfiguration: Sendable, Hashable {
    /// 256 MiB: a few thousand product photos, or tens of thousands of thumbnails.
    public static let defaultSizeLimit = 256 << 20

    /// Largest total size of the entry files, in bytes. nil keeps the limit recorded in the
    /// directory (`defaultSizeLimit` for a new one) and evicts nothing at open; a value is
    /// recorded in the directory and applied at open. Either way it holds after every write:
    /// the least recently used entries are evicted as part of the write that would exceed it.
    public var sizeLimit: Int?
    /// Makes every acknowledged store survive power loss, not only a process crash: the entry
    /// is flushed before its rename, the directory after it, and the journal after its record
    /// (about 3 device flushes per store; see the README for the cost). Without it, a killed
    /// process still loses nothing that was stored, since the kernel keeps written pages.
    public var synchronizesWrites: Bool

    /// A configuration; by default the directory's own limit and no device flushes.
    public init(sizeLimit: Int? = nil, synchronizesWrites: Bool = false) {
        self.sizeLimit = sizeLimit
        self.synchronizesWrites = synchronizesWrites
    }
}

/// What a `DiskCache` holds and has done since it was opened.
public struct DiskCacheStatistics: Sendable, Hashable, Codable {
    /// Event counters since the cache was opened.
    public struct Counters: Sendable, Hashable, Codable {
        /// Reads that returned an entry.
        public var hits = 0
        /// Reads that found nothing usable (absent, expired or damaged).
        public var misses = 0
        /// Entries found torn, damaged or replaced by something else on read, and removed.
        public var corruptEntriesRemoved = 0
        /// Entries removed to keep the size limit.
        public var evictions = 0
        /// Evictions whose file could not be removed (it stays counted and is retried).
        public var failedEvictions = 0

        /// Counters with the given values (all zero by default).
        public init(hits: Int = 0, misses: Int = 0, corruptEntriesRemoved: Int = 0, evictions: Int = 0, failedEvictions: Int = 0) {
            self.hits = hits
            self.misses = misses
            self.corruptEntriesRemoved = corruptEntriesRemoved
            self.evictions = evictions
            self.failedEvictions = failedEvictions
        }
    }

    /// Entries in the cache.
    public var count: Int
    /// Bytes of the entry files together (as the file system reports them).
    public var totalBytes: Int
    /// The directory's size limit.
    public var sizeLimit: Int
    /// Events since opening.
    public var counters: Counters
    /// True while the cache cannot write (disk full or read-only at open): reads still work.
    public var isReadOnly: Bool

    /// Statistics with the given values, for example for a test double.
    public init(count: Int, totalBytes: Int, sizeLimit: Int, counters: Counters = Counters(), isReadOnly: Bool = false) {
        self.count = count
        self.totalBytes = totalBytes
        self.sizeLimit = sizeLimit
        self.counters = counters
        self.isReadOnly = isReadOnly
    }
}

/// Result of `DiskCache.verify()`: every entry read and checked, damage repaired.
public struct DiskCacheVerificationReport: Sendable, Hashable, Codable {
    /// Entries there were to check once the directory was repaired.
    public var checked: Int
    /// Entries read back intact.
    public var valid: Int
    /// Entry files whose checksum, lengths or format were wrong (removed).
    public var corrupt: [String]
    /// Things in the cache directory that no entry owns, e.g. left by a killed write or put
    /// there from outside (removed), as `entries/NAME` or `tmp/NAME`.
    public var orphans: [String]
    /// Entries the journal or index listed whose file is gone (dropped from the index).
    public var missing: [String]
    /// Entries after the check.
    public var count: Int
    /// Bytes of the entry files after the check.
    public var totalBytes: Int

    /// A report with the given values (empty by default).
    public init(
        checked: Int = 0, valid: Int = 0, corrupt: [String] = [], orphans: [String] = [], missing: [String] = [],
        count: Int = 0, totalBytes: Int = 0
    ) {
        self.checked = checked
        self.valid = valid
        self.corrupt = corrupt
        self.orphans = orphans
        self.missing = missing
        self.count = count
        self.totalBytes = totalBytes
    }
}
