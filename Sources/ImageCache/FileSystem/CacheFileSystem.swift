import Foundation

/// The file-system operations `DiskCache` performs: the seam where tests inject faults
/// (disk full, permission denied, directory removed) that real directories rarely produce
/// on demand.
public protocol CacheFileSystem: Sendable {
    func createDirectory(at path: String) throws(FileSystemError)
    /// The whole file. Throws with `ENOENT` when it does not exist.
    func readFile(at path: String) throws(FileSystemError) -> Data
    /// Creates or truncates `path` and writes `data`; with `synchronize`, also fsyncs.
    func writeFile(_ data: Data, to path: String, synchronize: Bool) throws(FileSystemError)
    /// Atomically replaces `destination` with `source` (rename(2)).
    func moveItem(from source: String, to destination: String) throws(FileSystemError)
    /// Removes a file; a file that is already gone is not an error.
    func removeFile(at path: String) throws(FileSystemError)
    func contentsOfDirectory(at path: String) throws(FileSystemError) -> [String]
    /// Size in bytes, or nil when the file does not exist.
    func fileSize(at path: String) throws(FileSystemError) -> Int?
    /// Opens `path` for appending, creating it if needed.
    func openForAppending(_ path: String) throws(FileSystemError) -> any AppendingFile
    /// Takes an exclusive advisory lock on `path` without waiting; `EWOULDBLOCK` when another
    /// process holds it. The lock lasts as long as the returned object.
    func lockExclusively(_ path: String) throws(FileSystemError) -> any AnyObject & Sendable
}

/// An open file that only grows (the journal).
public protocol AppendingFile: AnyObject, Sendable {
    /// Writes all of `data` at the end of the file in one `write(2)` where possible, so a
    /// record is either wholly there or torn at the very end, where the reader drops it.
    func append(_ data: Data) throws(FileSystemError)
}

/// A failed system call: which operation, on which path, and `errno`.
public struct FileSystemError: Error, Sendable, Hashable, CustomStringConvertible {
    public var operation: String
    public var path: String
    public var code: Int32

    public init(operation: String, path: String, code: Int32) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    public var description: String { "\(operation) \(path): \(String(cString: strerror(code)))" }
}
