// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {TransferHelper} from "./ERC20.sol";
import {Owned} from "./Owned.sol";
import {LaunchToken} from "./LaunchToken.sol";
import {AmmFactory} from "./AmmFactory.sol";
import {AmmPair} from "./AmmPair.sol";
import {FeeLocker} from "./FeeLocker.sol";

/// @title InstantPoolLauncher ("venue-b")
/// @notice Launches a token straight into an AMM pool: the whole supply goes single-sided into a
/// launch pair whose virtual quote reserve equals the chosen starting market cap (opening price =
/// market cap / supply). The LP tokens are locked in the FeeLocker forever. Every swap on the pool
/// pays a 1% fee hook (of its input) to the FeeLocker, split 50/50 creator/platform, on top of
/// the 0.3% LP fee, which stays in the (locked) pool.
contract InstantPoolLauncher is Owned {
    /// @notice Supply minted for every token, all of it into the pool.
    uint256 public constant TOKEN_SUPPLY = 1_000_000_000 * 1e18;
    /// @notice Fee hook of launched pools, in basis points of each swap input.
    uint256 public constant POOL_FEE_BPS = 100;
    /// @notice Upper bound for the starting market cap, keeping the pool math far from overflow.
    uint256 public constant MAX_STARTING_MARKET_CAP = 1e36;

    struct QuoteConfig {
        bool allowed;
        uint256 minStartingMarketCap;
    }

    struct Launch {
        address creator;
        address quote;
        address pair;
    }

    address public immutable factory;
    /// @notice Locker holding every launched pool's LP tokens and fees; created by this contract.
    address public immutable feeLocker;
    mapping(address => QuoteConfig) public quoteConfig;
    /// @notice Every token launched here, in launch order.
    address[] public allTokens;
    mapping(address => Launch) private launches;

    event PoolLaunched(
        address indexed token,
        address indexed pair,
        address indexed creator,
        address quote,
        string name,
        string symbol,
        uint256 supply,
        uint256 startingMarketCap
    );
    event QuoteAssetConfigured(address indexed quote, bool allowed, uint256 minStartingMarketCap);

    /// @param platformFeeRecipient Receives the platform half of the fee hook (fixed for the locker's life).
    constructor(address factory_, address platformFeeRecipient) {
        factory = factory_;
        feeLocker = address(new FeeLocker(platformFeeRecipient));
    }

    /// @notice Allows or disallows a quote asset and sets its minimum starting market cap. Owner only.
    function setQuoteAsset(address quote, bool allowed, uint256 minStartingMarketCap) external onlyOwner {
        if (allowed) {
            require(quote.code.length > 0, "PoolLauncher: quote asset has no code");
            require(minStartingMarketCap > 0, "PoolLauncher: zero minimum market cap");
        }
        quoteConfig[quote] = QuoteConfig(allowed, minStartingMarketCap);
        emit QuoteAssetConfigured(quote, allowed, minStartingMarketCap);
    }

    /// @notice Creates a token and its pool; the caller is the creator (claims fees via FeeLocker.claim).
    /// @param quoteAsset An allowed quote asset (WETH for ETH, or e.g. USDC).
    /// @param startingMarketCapInQuote Market cap at the opening price, in quote base units; the pool's virtual quote reserve.
    /// @return token The new token.
    /// @return pair Its pool.
    function launch(string calldata name, string calldata symbol, address quoteAsset, uint256 startingMarketCapInQuote)
        external
        returns (address token, address pair)
    {
        QuoteConfig memory config = quoteConfig[quoteAsset];
        require(config.allowed, "PoolLauncher: quote asset not allowed");
        require(startingMarketCapInQuote >= config.minStartingMarketCap, "PoolLauncher: starting market cap below minimum");
        require(startingMarketCapInQuote <= MAX_STARTING_MARKET_CAP, "PoolLauncher: starting market cap too high");
        require(bytes(name).length > 0 && bytes(name).length <= 64, "PoolLauncher: name must be 1-64 bytes");
        require(bytes(symbol).length > 0 && bytes(symbol).length <= 16, "PoolLauncher: symbol must be 1-16 bytes");
        token = address(new LaunchToken(name, symbol, TOKEN_SUPPLY, address(this)));
        pair = AmmFactory(factory).createLaunchPair(token, quoteAsset, startingMarketCapInQuote, feeLocker, POOL_FEE_BPS);
        TransferHelper.safeTransfer(token, pair, TOKEN_SUPPLY);
        AmmPair(pair).mint(feeLocker);
        FeeLocker(feeLocker).register(token, pair, quoteAsset, msg.sender);
        launches[token] = Launch(msg.sender, quoteAsset, pair);
        allTokens.push(token);
        emit PoolLaunched(token, pair, msg.sender, quoteAsset, name, symbol, TOKEN_SUPPLY, startingMarketCapInQuote);
    }

    /// @notice Creator, quote asset and pool of a launched token (all zero if unknown).
    function getLaunch(address token) external view returns (Launch memory) {
        return launches[token];
    }

    /// @notice Number of tokens launched so far.
    function allTokensLength() external view returns (uint256) {
        return allTokens.length;
    }
}
