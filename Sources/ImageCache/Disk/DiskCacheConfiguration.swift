/// Limits and durability of a `DiskCache`.
public struct DiskCacheConfiguration: Sendable, Hashable {
    /// Largest total size of the entry files, in bytes. It holds after every write: the least
    /// recently used entries are evicted as part of the write that would exceed it.
    public var sizeLimit: Int
    /// fsync each entry before it is renamed into place. Process crashes (`kill -9`) never lose
    /// a stored entry either way, since the kernel keeps written pages; this also survives power
    /// loss, at the price of a disk flush per write.
    public var synchronizesWrites: Bool

    public init(sizeLimit: Int = 150 << 20, synchronizesWrites: Bool = false) {
        self.sizeLimit = sizeLimit
        self.synchronizesWrites = synchronizesWrites
    }
}

/// What a `DiskCache` holds and has done since it was opened.
public struct DiskCacheStatistics: Sendable, Hashable, Codable {
    public var count: Int
    public var totalBytes: Int
    public var sizeLimit: Int
    public var hits: Int
    public var misses: Int
    /// Entries found torn or damaged on read and removed.
    public var corruptEntriesRemoved: Int
}

/// Result of `DiskCache.verify()`: every entry read and checked, damage repaired.
public struct DiskCacheVerificationReport: Sendable, Hashable, Codable {
    public var checked: Int
    public var valid: Int
    /// Entry files whose checksum, lengths or format were wrong (removed).
    public var corrupt: [String]
    /// Files in the cache directory that no entry owns, e.g. left by a killed write (removed).
    public var orphans: [String]
    /// Entries the journal lists whose file is gone (dropped from the index).
    public var missing: [String]
    public var count: Int
    public var totalBytes: Int
}
