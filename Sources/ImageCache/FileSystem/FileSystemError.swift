#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call: which operation, on which path, and `errno`.
public struct FileSystemError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call that failed, e.g. `openat` or `renameat`.
    public var operation: String
    /// The path it was called on, for messages.
    public var path: String
    /// `errno` of the failed call, or `FileSystemError.notRegularFile`.
    public var code: Int32

    /// An error for `operation` on `path` with `errno` `code`.
    public init(operation: String, path: String, code: Int32) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    /// The code for "the name is a link, directory, FIFO, socket or device where a regular file
    /// was expected". POSIX has no errno for it; `EFTYPE` exists only on BSDs.
    public static let notRegularFile: Int32 = -1

    /// True for the errors that mean "no space or no right to write here": the cache then
    /// keeps serving reads and refuses writes instead of failing to open.
    public var meansReadOnly: Bool {
        [ENOSPC, EDQUOT, EROFS, EACCES, EPERM].contains(code)
    }

    public var description: String {
        let reason = code == Self.notRegularFile ? "not a regular file" : String(cString: strerror(code))
        return "\(operation) \(path): \(reason)"
    }
}
