package io.rdmaactors.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.typesafe.config.ConfigFactory;
import io.rdmaactors.actors.RdmaSettings;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** reference.conf lists the soft fabric's options with the defaults the fabric itself takes. */
class FabricOptionsDefaultsTest {

    @Test
    void referenceConfListsEverySoftOptionWithItsDefault() {
        Map<String, String> listed = RdmaSettings.from(ConfigFactory.defaultReference()).fabricOptions();
        Map<String, String> defaults = new HashMap<>(SoftOptions.DEFAULTS);
        defaults.remove("threads.prefix"); // rdma-actors names its threads after the actor system
        assertEquals(defaults, listed);
    }
}
