import Foundation

/// `image-engine serve` running as a child process, as an operator runs it: the port read from
/// its "listening on" line, signals sent to it, its exit status awaited.
final class ServeProcess: @unchecked Sendable {
    // @unchecked: `output`/`errors` are only touched while `lock` is held; `process` is set once.
    private let process = Process()
    private let lock = NSLock()
    private var output = Data()
    private var errors = Data()

    /// Starts `image-engine serve arguments` with the documentation's key pair in the environment
    /// (or `environment` instead).
    init(_ arguments: [String], environment: [String: String]? = nil) throws {
        process.executableURL = CLIRunner.executable
        process.arguments = ["serve"] + arguments
        var variables = ProcessInfo.processInfo.environment
        variables["IMAGE_ENGINE_KEY"] = nil
        variables["IMAGE_ENGINE_SALT"] = nil
        variables.merge(environment ?? ["IMAGE_ENGINE_KEY": "736563726574", "IMAGE_ENGINE_SALT": "68656C6C6F"]) { $1 }
        process.environment = variables
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        out.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            self?.lock.withLock { self?.output.append(data) }
        }
        err.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            self?.lock.withLock { self?.errors.append(data) }
        }
        try process.run()
    }

    deinit {
        if process.isRunning { process.terminate() }
    }

    var stdout: String { lock.withLock { String(decoding: output, as: UTF8.self) } }
    var stderr: String { lock.withLock { String(decoding: errors, as: UTF8.self) } }

    /// The port from the "listening on http://HOST:PORT" line (`metrics`: from "metrics on").
    func port(metrics: Bool = false, timeout: Duration = .seconds(60)) async throws -> Int {
        let marker = metrics ? "metrics on http://" : "listening on http://"
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = stderr.split(separator: "\n").first(where: { $0.contains(marker) }),
                let address = line.components(separatedBy: marker).last?.split(separator: " ").first,
                let port = address.split(separator: ":").last.flatMap({ Int($0.prefix { $0.isNumber }) })
            {
                return port
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ServeFailure(message: "no '\(marker)' line; stderr: \(stderr)")
    }

    func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// The most resident memory the process has had (`VmHWM`), in bytes.
    var peakResidentBytes: Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }

    /// Waits for the process to exit and returns its status.
    func exitStatus(timeout: Duration = .seconds(60)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        guard !process.isRunning else {
            process.terminate()
            throw ServeFailure(message: "still running after \(timeout)")
        }
        return process.terminationStatus
    }

    struct ServeFailure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}
