#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Whole-file reads and atomic writes on POSIX calls, with `ImageCodecError.io` errors that
/// carry the path and `errno`: never a wrapped Foundation error, and no `Data(contentsOf:)`
/// (which leaks on empty files on Linux). Used by the codec, the budget and the CLI in this
/// package; not public API.
package enum FileBytes {
    /// Reads the regular file at `url` into memory (not mapped: a mapped file truncated by
    /// another process would kill this one with SIGBUS). Anything but a regular file is refused
    /// before reading (`EISDIR` for a directory, `ENODEV` for a FIFO, socket or device, which
    /// could block forever), and so is a file over `maximumSize` (`EFBIG`), before allocating.
    /// An empty file gives empty `Data` without any read.
    package static func read(_ url: URL, maximumSize: Int = .max) throws(ImageCodecError) -> Data {
        try read(url) { (size) throws(ImageCodecError) in
            guard size <= maximumSize else { throw .io(path: url.path, errno: EFBIG) }
            return size
        }.data
    }

    /// The first `count` bytes of the regular file at `url` (all of it when shorter), and the
    /// file's size; refuses what `read(_:maximumSize:)` refuses. For reading a header cheaply.
    package static func readPrefix(_ url: URL, count: Int) throws(ImageCodecError) -> (data: Data, fileSize: Int) {
        try read(url) { size in min(size, count) }
    }

    /// Opens `url`, checks it is a regular file, and reads `amount(size)` bytes of it.
    private static func read(_ url: URL, amount: (Int) throws(ImageCodecError) -> Int) throws(ImageCodecError) -> (data: Data, fileSize: Int) {
        let path = url.path
        let file = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard file >= 0 else { throw .io(path: path, errno: errno) }
        defer { close(file) }
        var info = stat()
        guard fstat(file, &info) == 0 else { throw .io(path: path, errno: errno) }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw .io(path: path, errno: EISDIR)
        default: throw .io(path: path, errno: ENODEV)
        }
        let fileSize = Int(info.st_size)
        let size = try amount(fileSize)
        guard size > 0 else { return (Data(), fileSize) }
        // Charged before the read: the file's size is known, and a ledger with no room refuses
        // the read before a byte is allocated.
        let charge = try MemoryLedger.current?.charge(size)
        guard let buffer = malloc(size) else { throw .outOfMemory } // charged: just above
        var total = 0
        while total < size {
            let count = Glibc.read(file, buffer + total, size - total)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                let code = errno
                free(buffer)
                throw .io(path: path, errno: code)
            }
            if count == 0 { break } // shrank while reading: decoding will see a truncated file
            total += count
        }
        try charge?.resize(to: total)
        let data = Data(
            bytesNoCopy: buffer, count: total, // charged: the charge above, released with the bytes
            deallocator: .custom { pointer, _ in
                free(pointer)
                withExtendedLifetime(charge) {}
            })
        return (data, fileSize)
    }

    /// Writes to a new temporary file beside `url` and renames it into place, so readers (and a
    /// crash) never see a half-written file. On failure nothing is left behind.
    package static func writeAtomically(_ data: Data, to url: URL) throws(ImageCodecError) {
        let staged = try stage(data, for: url)
        do { try staged.commit() } catch {
            staged.discard()
            throw error
        }
    }

    /// Writes `data` to a new temporary file beside `url`, to be renamed into place with
    /// ``StagedFile/commit()`` once everything a command writes is ready (all or nothing), or
    /// removed with ``StagedFile/discard()``. A `url` that is a directory is refused here
    /// (`EISDIR`), so a later commit does not fail halfway through a set.
    package static func stage(_ data: Data, for url: URL) throws(ImageCodecError) -> StagedFile {
        let path = url.path
        var info = stat()
        if stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR { throw .io(path: path, errno: EISDIR) }
        let temporary = url.deletingLastPathComponent().path + "/." + url.lastPathComponent + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let file = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard file >= 0 else {
            // Report the destination (the temporary name means nothing to the user).
            throw .io(path: path, errno: errno)
        }
        var failure: Int32?
        data.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let count = write(file, base + offset, buffer.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += count
            }
        }
        if close(file) != 0 && failure == nil { failure = errno }
        if let failure {
            unlink(temporary)
            throw .io(path: path, errno: failure)
        }
        return StagedFile(temporaryPath: temporary, destination: url)
    }

    /// A complete file under a temporary name beside its destination.
    package struct StagedFile: Sendable {
        let temporaryPath: String
        /// Where ``commit()`` puts it.
        package let destination: URL

        /// Renames the file into place, replacing what was there.
        package func commit() throws(ImageCodecError) {
            if rename(temporaryPath, destination.path) != 0 { throw .io(path: destination.path, errno: errno) }
        }

        /// Removes the temporary file.
        package func discard() {
            unlink(temporaryPath)
        }
    }

    /// Names of the regular files (or links to them) directly in `directory`, unsorted.
    package static func regularFileNames(in directory: URL) throws(ImageCodecError) -> [String] {
        let path = directory.path
        guard let stream = opendir(path) else { throw .io(path: path, errno: errno) }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            var info = stat()
            if name != ".", name != "..", stat(path + "/" + name, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
                names.append(name)
            }
        }
        return names
    }

    /// Creates `directory` and its parents if missing; returns the ones it created, parents
    /// first, so that a command that fails can remove them again (``removeDirectories(_:)``).
    @discardableResult
    package static func createDirectory(_ directory: URL) throws(ImageCodecError) -> [String] {
        var prefix = directory.path.hasPrefix("/") ? "" : "."
        var created: [String] = []
        for component in directory.path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o755) == 0 {
                created.append(prefix)
            } else if errno != EEXIST {
                let code = errno
                removeDirectories(created)
                throw .io(path: prefix, errno: code)
            }
        }
        var info = stat()
        if stat(directory.path, &info) != 0 { throw .io(path: directory.path, errno: errno) }
        if info.st_mode & S_IFMT != S_IFDIR { throw .io(path: directory.path, errno: ENOTDIR) }
        return created
    }

    /// Removes directories made by ``createDirectory(_:)``, deepest first, if still empty.
    package static func removeDirectories(_ created: [String]) {
        for path in created.reversed() { rmdir(path) }
    }
}
