import Foundation

/// Runs the built `image-engine` executable, as users and outside checks do.
struct CLIRunner {
    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String

        /// stdout parsed as one JSON object per line.
        var jsonLines: [[String: Any]] {
            stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }
    }

    /// The executable sits beside the test bundle in the build directory.
    static let executable: URL = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("image-engine").path),
            directory.path != "/"
        {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("image-engine")
    }()

    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("SampleImages")

    /// Runs the CLI and waits for it on a dispatch thread: tests run in parallel on Swift's few
    /// cooperative threads, and one blocked while a child process works would starve the rest
    /// (a loopback server among them).
    ///
    /// `environment`, when given, replaces the signing variables (`IMAGE_ENGINE_KEY`,
    /// `IMAGE_ENGINE_SALT`) of the test process's own environment. A child still running after
    /// `timeout` seconds is terminated (a command that should have exited must fail its test,
    /// not hang it).
    static func run(_ arguments: [String], environment: [String: String]? = nil, timeout: TimeInterval = 600) async throws -> Outcome {
        try await offCooperativePool { try runBlocking(executable, arguments, environment: environment, timeout: timeout) }
    }

    /// `/bin/sh -c command`, with `environment` as for `run`: for what only a shell sets up
    /// (`ulimit`) before it starts the executable.
    static func shell(_ command: String, environment: [String: String]? = nil, timeout: TimeInterval = 600) async throws -> Outcome {
        try await offCooperativePool {
            try runBlocking(URL(fileURLWithPath: "/bin/sh"), ["-c", command], environment: environment, timeout: timeout)
        }
    }

    /// Runs blocking work (waiting for processes, sleeping) on a dispatch thread.
    static func offCooperativePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
        }
    }

    private static func runBlocking(
        _ program: URL, _ arguments: [String], environment: [String: String]?, timeout: TimeInterval
    ) throws -> Outcome {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        if let environment {
            var variables = ProcessInfo.processInfo.environment
            variables["IMAGE_ENGINE_KEY"] = nil
            variables["IMAGE_ENGINE_SALT"] = nil
            process.environment = variables.merging(environment) { $1 }
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { if process.isRunning { process.terminate() } }
        // Read before waiting so a full pipe cannot block the child.
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }
}
