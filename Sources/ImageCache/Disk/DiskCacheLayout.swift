import Foundation

/// The open directories, the process lock and the journal of one cache directory:
///
/// ```
/// DIR/lock              flock held while the cache is open
/// DIR/journal           the append-only journal (see `Journal`)
/// DIR/entries/<sha256>  one file per entry (see `EntryFile`)
/// DIR/tmp/              writes land here first, then rename(2) into entries/
/// ```
struct DiskCacheLayout {
    static let lockName = "lock"
    static let entriesName = "entries"
    static let temporaryName = "tmp"

    let root: any CacheDirectory
    let entries: any CacheDirectory
    let temporary: any CacheDirectory
    /// nil when the lock file cannot be created (a read-only file system): the cache then
    /// only reads.
    let directoryLock: (any AnyObject & Sendable)?
    /// Why the layout could not be opened for writing, if it could not.
    let readOnlyReason: FileSystemError?

    /// Opens (creating if needed) the layout and takes the process lock. Symbolic links and
    /// other squatters at `lock`, `entries` and `tmp` are removed, never followed.
    static func open(_ url: URL, fileSystem: any CacheFileSystem) throws(DiskCacheError) -> DiskCacheLayout {
        let root: any CacheDirectory
        do { root = try fileSystem.openRoot(url) } catch { throw .io(error) }
        var directoryLock: (any AnyObject & Sendable)?
        var readOnlyReason: FileSystemError?
        do {
            directoryLock = try lock(root)
        } catch  where error.code == EWOULDBLOCK || error.code == EAGAIN {
            throw .locked(directory: url)
        } catch  where error.meansReadOnly {
            readOnlyReason = error
        } catch {
            throw .io(error)
        }
        do {
            return DiskCacheLayout(
                root: root, entries: try root.subdirectory(entriesName),
                temporary: try root.subdirectory(temporaryName),
                directoryLock: directoryLock, readOnlyReason: readOnlyReason)
        } catch {
            throw .io(error)
        }
    }

    private static func lock(_ root: any CacheDirectory) throws(FileSystemError) -> any AnyObject & Sendable {
        do {
            return try root.lockExclusively(lockName)
        } catch  where error.code == FileSystemError.notRegularFile {
            // A link or FIFO planted at the lock's name: remove it (not its target) and lock a
            // real file.
            try root.remove(lockName)
            return try root.lockExclusively(lockName)
        }
    }
}
