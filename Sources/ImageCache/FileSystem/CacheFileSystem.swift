import Foundation

/// The file-system operations `DiskCache` performs: the seam where tests inject faults (disk
/// full, permission denied, a directory removed) that real directories rarely produce on demand.
///
/// Everything below the root is reached through `CacheDirectory` handles and plain names, never
/// through paths: an implementation resolves names relative to an open directory and never
/// follows a symbolic link, so whatever the cache directory holds (links to elsewhere, FIFOs,
/// stray directories), no operation reads, writes or deletes anything outside it.
public protocol CacheFileSystem: Sendable {
    /// Opens the cache's root directory, creating it and its parents if needed. Links in the
    /// path the caller chose are followed: that path is the caller's, not the cache's contents.
    func openRoot(_ url: URL) throws(FileSystemError) -> any CacheDirectory
}

/// An open directory inside the cache. Names are single path components.
public protocol CacheDirectory: AnyObject, Sendable {
    /// The directory's path, for messages only.
    var path: String { get }
    /// Opens the subdirectory `name`, creating it if missing. Anything else at that name (a
    /// symbolic link, a file, a FIFO) is removed first and replaced by a real directory.
    func subdirectory(_ name: String) throws(FileSystemError) -> any CacheDirectory
    /// What the directory holds, `.` and `..` excepted, with kind, size and modification time.
    func list() throws(FileSystemError) -> [CacheFileStatus]
    /// Kind, size and modification time of `name` (not following links); nil when absent.
    func status(of name: String) throws(FileSystemError) -> CacheFileStatus?
    /// The whole of the regular file `name`, read into memory from `memory` (one buffer, of the
    /// file's size). Throws `ENOENT` when absent, `FileSystemError.notRegularFile` for anything
    /// but a regular file (never opening a FIFO or following a link), `EFBIG` when it is larger
    /// than `maximumSize`, and `ENOMEM` when `memory` has no room (both checked before
    /// allocating).
    func readFile(_ name: String, maximumSize: Int, memory: any ReadMemory) throws(FileSystemError) -> Data
    /// The first `count` bytes of the regular file `name` (fewer if it is shorter).
    func readPrefix(of name: String, count: Int) throws(FileSystemError) -> Data
    /// Creates the new file `name` (it must not exist: `EEXIST` otherwise) and writes the
    /// `parts`, one after another (an entry's header and its bytes, which are never copied
    /// into one buffer); with `synchronize`, also flushes it to the device.
    func createFile(_ name: String, contents parts: [Data], synchronize: Bool) throws(FileSystemError)
    /// Atomically renames `name` to `newName` in `destination` (rename(2)), replacing a file there.
    func move(_ name: String, to destination: any CacheDirectory, as newName: String) throws(FileSystemError)
    /// Removes `name`, whatever it is (a directory with its contents, never following a link).
    /// Already absent is not an error.
    func remove(_ name: String) throws(FileSystemError)
    /// Opens the regular file `name` for appending, creating it if missing.
    func openForAppending(_ name: String) throws(FileSystemError) -> any AppendingFile
    /// Takes an exclusive advisory lock on the regular file `name` (created if missing) without
    /// waiting: `EWOULDBLOCK` when another process holds it. The lock lasts as long as the
    /// returned object.
    func lockExclusively(_ name: String) throws(FileSystemError) -> any AnyObject & Sendable
    /// Flushes the directory itself (the names in it) to the device.
    func synchronize() throws(FileSystemError)
}

extension CacheDirectory {
    /// The whole of the regular file `name`, in plain memory.
    public func readFile(_ name: String, maximumSize: Int) throws(FileSystemError) -> Data {
        try readFile(name, maximumSize: maximumSize, memory: PlainReadMemory())
    }
}

/// An open file that only grows (the journal).
public protocol AppendingFile: AnyObject, Sendable {
    /// Writes all of `data` at the end of the file in one `write(2)` where possible, so a
    /// record is either wholly there or torn at the very end, where the reader drops it.
    func append(_ data: Data) throws(FileSystemError)
    /// Flushes what was appended to the device.
    func synchronize() throws(FileSystemError)
}

/// What `CacheDirectory.list()` and `status(of:)` report about one name.
public struct CacheFileStatus: Sendable, Hashable {
    /// What kind of object the name refers to, without following links.
    public enum Kind: Sendable, Hashable {
        /// A regular file.
        case regular
        /// A directory.
        case directory
        /// A symbolic link (never followed).
        case symbolicLink
        /// FIFOs, sockets, devices.
        case other
    }

    /// The name in its directory.
    public var name: String
    /// What the name refers to, links not followed.
    public var kind: Kind
    /// Bytes, for regular files.
    public var size: Int
    /// Last modification time.
    public var modified: Date

    /// A status, e.g. from a fault-injecting file system in tests.
    public init(name: String, kind: Kind, size: Int, modified: Date) {
        self.name = name
        self.kind = kind
        self.size = size
        self.modified = modified
    }
}
