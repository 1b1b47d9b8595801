// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {AmmPair, PairConfig} from "./AmmPair.sol";
import {Owned} from "./Owned.sol";

/// @title AmmFactory
/// @notice Creates AmmPairs, at most one per token pair, and indexes them.
/// Plain pairs are permissionless. Launch pairs (virtual quote reserve, fee hook, liquidity locked)
/// can only be created by pool deployers the owner approved (the launch venues).
contract AmmFactory is Owned {
    /// @notice Pair of two tokens, in either order; zero if none.
    mapping(address => mapping(address => address)) public getPair;
    /// @notice Every pair, in creation order.
    address[] public allPairs;
    /// @notice Contracts allowed to call `createLaunchPair`.
    mapping(address => bool) public isPoolDeployer;

    event PairCreated(address indexed token0, address indexed token1, address pair, uint256 pairCount);
    event PoolDeployerSet(address indexed deployer, bool allowed);

    /// @notice Number of pairs created so far.
    function allPairsLength() external view returns (uint256) {
        return allPairs.length;
    }

    /// @notice Allows or disallows `deployer` to create launch pairs. Owner only.
    function setPoolDeployer(address deployer, bool allowed) external onlyOwner {
        isPoolDeployer[deployer] = allowed;
        emit PoolDeployerSet(deployer, allowed);
    }

    /// @notice Creates a plain constant-product pair.
    /// @dev Both tokens must already be deployed, except that a token may create its own pair from
    /// its constructor (see SelfFundedToken); this stops anyone squatting the pair of a token that
    /// does not exist yet.
    /// @return pair The new pair.
    function createPair(address tokenA, address tokenB) external returns (address pair) {
        _requireDeployed(tokenA);
        _requireDeployed(tokenB);
        PairConfig memory config;
        return _create(tokenA, tokenB, config);
    }

    /// @notice Creates a launch pair for `token` against `quote`. Approved pool deployers only.
    /// @param virtualQuoteReserve Quote amount the price math adds to the real quote reserve.
    /// @param feeRecipient Receiver of the fee hook (zero for none).
    /// @param feeBps Fee hook in basis points of each swap input (zero for none).
    /// @return pair The new pair; the caller becomes its initializer (sole liquidity provider).
    function createLaunchPair(address token, address quote, uint256 virtualQuoteReserve, address feeRecipient, uint256 feeBps)
        external
        returns (address pair)
    {
        require(isPoolDeployer[msg.sender], "AmmFactory: caller is not an approved pool deployer");
        require(token.code.length > 0 && quote.code.length > 0, "AmmFactory: token has no code");
        bool quoteIsToken0 = quote < token;
        PairConfig memory config = PairConfig({
            virtualReserve0: quoteIsToken0 ? virtualQuoteReserve : 0,
            virtualReserve1: quoteIsToken0 ? 0 : virtualQuoteReserve,
            initializer: msg.sender,
            feeRecipient: feeRecipient,
            feeBps: feeBps
        });
        return _create(token, quote, config);
    }

    function _requireDeployed(address token) private view {
        require(token.code.length > 0 || token == msg.sender, "AmmFactory: token has no code");
    }

    function _create(address tokenA, address tokenB, PairConfig memory config) private returns (address pair) {
        require(tokenA != tokenB, "AmmFactory: identical tokens");
        (address token0, address token1) = tokenA < tokenB ? (tokenA, tokenB) : (tokenB, tokenA);
        require(token0 != address(0), "AmmFactory: zero address");
        require(getPair[token0][token1] == address(0), "AmmFactory: pair exists");
        pair = address(new AmmPair(token0, token1, config));
        getPair[token0][token1] = pair;
        getPair[token1][token0] = pair;
        allPairs.push(pair);
        emit PairCreated(token0, token1, pair, allPairs.length);
    }
}
