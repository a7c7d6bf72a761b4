/// Failures of the disk cache. After any of them the cache object remains usable.
public enum DiskCacheError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Another process has the directory open; sharing one cache directory between
    /// processes is refused rather than risked.
    case locked(directory: String)
    /// A system call failed (disk full, permission denied, directory removed, ...).
    case io(FileSystemError)
    /// The entry alone is larger than the cache's size limit.
    case entryTooLarge(key: String, size: Int, limit: Int)

    public var description: String {
        switch self {
        case .locked(let directory): "cache directory \(directory) is in use by another process"
        case .io(let error): "cache I/O failed: \(error)"
        case .entryTooLarge(let key, let size, let limit): "entry \(key) (\(size) bytes) exceeds the cache size limit of \(limit) bytes"
        }
    }
}
