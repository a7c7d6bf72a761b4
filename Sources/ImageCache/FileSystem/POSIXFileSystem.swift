#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// `CacheFileSystem` on POSIX calls, with errno reported as is.
public struct POSIXFileSystem: CacheFileSystem {
    public init() {}

    public func createDirectory(at path: String) throws(FileSystemError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw FileSystemError(operation: "mkdir", path: prefix, code: errno)
            }
        }
    }

    public func readFile(at path: String) throws(FileSystemError) -> Data {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileSystemError(operation: "open", path: path, code: errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw FileSystemError(operation: "fstat", path: path, code: errno) }
        // Read into uninitialised memory that the Data then owns: no zero-fill, no copy.
        let size = Int(status.st_size)
        guard let buffer = malloc(max(size, 1)) else { throw FileSystemError(operation: "malloc", path: path, code: ENOMEM) }
        var total = 0
        while total < size {
            let count = read(descriptor, buffer + total, size - total)
            if count < 0 {
                if errno == EINTR { continue }
                let code = errno
                free(buffer)
                throw FileSystemError(operation: "read", path: path, code: code)
            }
            if count == 0 { break }  // shrank while reading: the checksum will tell
            total += count
        }
        return Data(bytesNoCopy: buffer, count: total, deallocator: .free)
    }

    public func writeFile(_ data: Data, to path: String, synchronize: Bool) throws(FileSystemError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FileSystemError(operation: "open", path: path, code: errno) }
        defer { close(descriptor) }
        try Self.writeAll(descriptor, data, path: path)
        if synchronize && fsync(descriptor) != 0 { throw FileSystemError(operation: "fsync", path: path, code: errno) }
    }

    public func moveItem(from source: String, to destination: String) throws(FileSystemError) {
        if rename(source, destination) != 0 { throw FileSystemError(operation: "rename", path: destination, code: errno) }
    }

    public func removeFile(at path: String) throws(FileSystemError) {
        if unlink(path) != 0 && errno != ENOENT { throw FileSystemError(operation: "unlink", path: path, code: errno) }
    }

    public func contentsOfDirectory(at path: String) throws(FileSystemError) -> [String] {
        guard let directory = opendir(path) else { throw FileSystemError(operation: "opendir", path: path, code: errno) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    public func fileSize(at path: String) throws(FileSystemError) -> Int? {
        var status = stat()
        if stat(path, &status) != 0 {
            if errno == ENOENT { return nil }
            throw FileSystemError(operation: "stat", path: path, code: errno)
        }
        return Int(status.st_size)
    }

    public func openForAppending(_ path: String) throws(FileSystemError) -> any AppendingFile {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FileSystemError(operation: "open", path: path, code: errno) }
        return POSIXAppendingFile(descriptor: descriptor, path: path)
    }

    public func lockExclusively(_ path: String) throws(FileSystemError) -> any AnyObject & Sendable {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FileSystemError(operation: "open", path: path, code: errno) }
        if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            close(descriptor)
            throw FileSystemError(operation: "flock", path: path, code: code)
        }
        return POSIXFileLock(descriptor: descriptor)
    }

    static func writeAll(_ descriptor: Int32, _ data: Data, path: String) throws(FileSystemError) {
        let failure: Int32? = data.withUnsafeBytes { buffer -> Int32? in
            var offset = 0
            while offset < buffer.count {
                let count = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
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
        try POSIXFileSystem.writeAll(descriptor, data, path: path)
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
