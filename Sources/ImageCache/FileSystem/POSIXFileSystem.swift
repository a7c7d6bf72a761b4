#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// `CacheFileSystem` on POSIX `*at` calls relative to open directory descriptors, with
/// `O_NOFOLLOW` everywhere below the root: a link planted inside the cache directory is never
/// followed, and a directory swapped for a link after it was opened is not either (the
/// descriptor still names the original).
public struct POSIXFileSystem: CacheFileSystem {
    /// The real file system.
    public init() {}

    public func openRoot(_ url: URL) throws(FileSystemError) -> any CacheDirectory {
        let path = url.path
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw FileSystemError(operation: "mkdir", path: prefix, code: errno)
            }
        }
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileSystemError(operation: "open", path: path, code: errno) }
        return POSIXDirectory(descriptor: descriptor, path: path)
    }
}

/// An open directory; every name is resolved relative to its descriptor.
final class POSIXDirectory: CacheDirectory {
    let descriptor: Int32
    let path: String

    init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    private func failure(_ operation: String, _ name: String, _ code: Int32 = errno) -> FileSystemError {
        FileSystemError(operation: operation, path: name.isEmpty ? path : path + "/" + name, code: code)
    }

    func subdirectory(_ name: String) throws(FileSystemError) -> any CacheDirectory {
        for attempt in 0..<2 {
            if mkdirat(descriptor, name, 0o755) != 0 && errno != EEXIST {
                throw failure("mkdir", name)
            }
            let opened = openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if opened >= 0 { return POSIXDirectory(descriptor: opened, path: path + "/" + name) }
            // A link (ELOOP) or a non-directory (ENOTDIR) squats the name: remove it, not
            // what it points to, and create the real directory.
            guard attempt == 0, errno == ELOOP || errno == ENOTDIR else { throw failure("open", name) }
            try remove(name)
        }
        throw failure("open", name, ENOTDIR)
    }

    func list() throws(FileSystemError) -> [CacheFileStatus] {
        var statuses: [CacheFileStatus] = []
        for name in try names() {
            if let status = try status(of: name) { statuses.append(status) }
        }
        return statuses
    }

    private func names() throws(FileSystemError) -> [String] {
        // fdopendir owns the descriptor it is given, so give it a duplicate.
        let duplicate = dup(descriptor)
        guard duplicate >= 0 else { throw failure("dup", "") }
        guard let stream = fdopendir(duplicate) else {
            let code = errno
            close(duplicate)
            throw failure("opendir", "", code)
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    func status(of name: String) throws(FileSystemError) -> CacheFileStatus? {
        var info = stat()
        if fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) != 0 {
            if errno == ENOENT { return nil }
            throw failure("stat", name)
        }
        return Self.status(name, info)
    }

    private static func status(_ name: String, _ info: stat) -> CacheFileStatus {
        let kind: CacheFileStatus.Kind =
            switch info.st_mode & S_IFMT {
            case S_IFREG: .regular
            case S_IFDIR: .directory
            case S_IFLNK: .symbolicLink
            default: .other
            }
        let modified = Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
        return CacheFileStatus(name: name, kind: kind, size: Int(info.st_size), modified: modified)
    }

    /// Opens `name` for reading only if it is a regular file. O_NONBLOCK so that a FIFO planted
    /// at the name cannot block the open; fstat then rejects it.
    private func openRegular(_ name: String) throws(FileSystemError) -> (descriptor: Int32, size: Int) {
        let opened = openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard opened >= 0 else { throw failure("open", name, Self.notRegularIfLinkOrDirectory(errno)) }
        var info = stat()
        guard fstat(opened, &info) == 0 else {
            let code = errno
            close(opened)
            throw failure("fstat", name, code)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(opened)
            throw failure("open", name, FileSystemError.notRegularFile)
        }
        return (opened, Int(info.st_size))
    }

    func readFile(_ name: String, maximumSize: Int, memory: any ReadMemory) throws(FileSystemError) -> Data {
        let (file, size) = try openRegular(name)
        defer { close(file) }
        guard size <= maximumSize else { throw failure("read", name, EFBIG) }
        return try Self.read(file, count: size, path: path + "/" + name, memory: memory)
    }

    func readPrefix(of name: String, count: Int) throws(FileSystemError) -> Data {
        let (file, size) = try openRegular(name)
        defer { close(file) }
        return try Self.read(file, count: min(size, count), path: path + "/" + name, memory: PlainReadMemory())
    }

    /// Reads up to `count` bytes into memory from `memory` that the `Data` then owns: no
    /// zero-fill, no copy. A file that shrinks meanwhile gives fewer bytes; the entry checksum
    /// then tells (one that grows gives its first `count`, and the same).
    private static func read(_ file: Int32, count: Int, path: String, memory: any ReadMemory) throws(FileSystemError) -> Data {
        guard let buffer = memory.allocate(max(count, 1)) else { throw FileSystemError(operation: "read", path: path, code: ENOMEM) }
        var total = 0
        while total < count {
            let result = Glibc.read(file, buffer.pointer + total, count - total)
            if result < 0 {
                if errno == EINTR { continue }
                let code = errno
                buffer.free(buffer.pointer)
                throw FileSystemError(operation: "read", path: path, code: code)
            }
            if result == 0 { break }
            total += result
        }
        return buffer.data(count: total)
    }

    func createFile(_ name: String, contents parts: [Data], synchronize: Bool) throws(FileSystemError) {
        let file = openat(descriptor, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard file >= 0 else { throw failure("create", name) }
        defer { close(file) }
        for part in parts { try Self.writeAll(file, part, path: path + "/" + name) }
        if synchronize && fsync(file) != 0 { throw failure("fsync", name) }
    }

    func move(_ name: String, to destination: any CacheDirectory, as newName: String) throws(FileSystemError) {
        guard let target = destination as? POSIXDirectory else { throw failure("rename", name, EXDEV) }
        if renameat(descriptor, name, target.descriptor, newName) != 0 {
            throw FileSystemError(operation: "rename", path: target.path + "/" + newName, code: errno)
        }
    }

    func remove(_ name: String) throws(FileSystemError) {
        try remove(name, depth: 0)
    }

    /// Hostile trees may be deep; beyond this depth removal gives up rather than recurse on.
    private static let maximumRemovalDepth = 32

    private func remove(_ name: String, depth: Int) throws(FileSystemError) {
        if unlinkat(descriptor, name, 0) == 0 || errno == ENOENT { return }
        guard errno == EISDIR || errno == EPERM else { throw failure("unlink", name) }
        // A directory: empty it without following links, then remove it.
        guard depth < Self.maximumRemovalDepth else { throw failure("remove", name, ELOOP) }
        let opened = openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard opened >= 0 else { throw failure("open", name) }
        let child = POSIXDirectory(descriptor: opened, path: path + "/" + name)
        for entry in try child.names() { try child.remove(entry, depth: depth + 1) }
        if unlinkat(descriptor, name, AT_REMOVEDIR) != 0 && errno != ENOENT { throw failure("rmdir", name) }
    }

    func openForAppending(_ name: String) throws(FileSystemError) -> any AppendingFile {
        let file = openat(descriptor, name, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o644)
        guard file >= 0 else { throw failure("open", name, Self.notRegularIfLinkOrDirectory(errno)) }
        var info = stat()
        guard fstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(file)
            throw failure("open", name, FileSystemError.notRegularFile)
        }
        return POSIXAppendingFile(descriptor: file, path: path + "/" + name)
    }

    func lockExclusively(_ name: String) throws(FileSystemError) -> any AnyObject & Sendable {
        let file = openat(descriptor, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o644)
        guard file >= 0 else { throw failure("open", name, Self.notRegularIfLinkOrDirectory(errno)) }
        var info = stat()
        guard fstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(file)
            throw failure("open", name, FileSystemError.notRegularFile)
        }
        if flock(file, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            close(file)
            throw failure("flock", name, code)
        }
        return POSIXFileLock(descriptor: file)
    }

    func synchronize() throws(FileSystemError) {
        if fsync(descriptor) != 0 { throw failure("fsync", "") }
    }

    /// `open` with `O_NOFOLLOW` reports a link as `ELOOP`, and opening a directory for writing
    /// as `EISDIR`: both mean "something else squats this name".
    private static func notRegularIfLinkOrDirectory(_ code: Int32) -> Int32 {
        code == ELOOP || code == EISDIR ? FileSystemError.notRegularFile : code
    }

    static func writeAll(_ file: Int32, _ data: Data, path: String) throws(FileSystemError) {
        let failure: Int32? = data.withUnsafeBytes { buffer -> Int32? in
            guard let base = buffer.baseAddress else { return nil }
            var offset = 0
            while offset < buffer.count {
                let count = write(file, base + offset, buffer.count - offset)
                if count < 0 { if errno == EINTR { continue }; return errno }
                offset += count
            }
            return nil
        }
        if let failure { throw FileSystemError(operation: "write", path: path, code: failure) }
    }
}

/// The journal's file descriptor; closed when released.
final class POSIXAppendingFile: AppendingFile {
    private let descriptor: Int32
    private let path: String

    init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    func append(_ data: Data) throws(FileSystemError) {
        try POSIXDirectory.writeAll(descriptor, data, path: path)
    }

    func synchronize() throws(FileSystemError) {
        if fdatasync(descriptor) != 0 { throw FileSystemError(operation: "fdatasync", path: path, code: errno) }
    }
}

/// Holds a `flock` until released (the kernel also drops it if the process dies).
final class POSIXFileLock: Sendable {
    private let descriptor: Int32

    init(descriptor: Int32) { self.descriptor = descriptor }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
