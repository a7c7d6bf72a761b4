import Foundation

/// Failures of the disk cache. After any of them the cache object remains usable.
public enum DiskCacheError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Another process has the directory open; sharing one cache directory between
    /// processes is refused rather than risked.
    case locked(directory: URL)
    /// A system call failed (disk full, permission denied, directory removed, ...).
    case io(FileSystemError)
    /// The entry alone is larger than the cache's size limit.
    case entryTooLarge(key: String, size: Int, limit: Int)
    /// The cache could not write when it was opened (a full disk, a read-only file system, no
    /// permission) and still cannot: it serves reads only.
    case readOnly(FileSystemError)
    /// A size limit that is not a positive number of bytes.
    case invalidSizeLimit(Int)
    /// The ``ReadMemory`` a read was given had no room for the entry's `bytes` (a server's
    /// memory budget is full): nothing was read, and the entry is still there.
    case noMemory(bytes: Int)

    public var description: String {
        switch self {
        case .locked(let directory): "cache directory \(directory.path) is in use by another process"
        case .io(let error): "cache I/O failed: \(error)"
        case .entryTooLarge(let key, let size, let limit): "entry \(key) (\(size) bytes) exceeds the cache size limit of \(limit) bytes"
        case .readOnly(let error): "cache is read-only: \(error)"
        case .invalidSizeLimit(let limit): "size limit must be a positive number of bytes, got \(limit)"
        case .noMemory(let bytes): "no memory for the \(bytes)-byte entry now"
        }
    }
}
