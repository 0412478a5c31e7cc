package io.rdmaactors.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/** Every program of the command line runs to the end on the soft fabric, with small parameters, and succeeds. */
class ExamplesTest {

    static Stream<Arguments> programs() {
        return Stream.of(
                Arguments.of((Object) new String[] {"ping-pong", "--count", "200"}),
                Arguments.of((Object) new String[] {"rping", "--count", "50", "--size", "64"}),
                Arguments.of((Object) new String[] {"devices"}),
                Arguments.of((Object) new String[] {"actor-ping-pong", "--count", "200"}),
                Arguments.of((Object) new String[] {"blast", "--count", "2000", "--size", "256"}),
                Arguments.of((Object) new String[] {"rdma", "--size", "512"}),
                Arguments.of((Object) new String[] {"atomics", "--clients", "3", "--count", "20"}),
                Arguments.of((Object) new String[] {"multicast", "--count", "20"}),
                Arguments.of((Object) new String[] {"srq-server", "--messages", "10"}),
                Arguments.of((Object) new String[] {"apm", "--count", "40"}),
                Arguments.of((Object) new String[] {"supervised-server", "--clients", "9", "--seconds", "3"}));
    }

    @ParameterizedTest
    @MethodSource("programs")
    void runsAndSucceeds(String[] args) {
        assertEquals(0, new CommandLine(new Main()).execute(args), String.join(" ", args));
    }
}
